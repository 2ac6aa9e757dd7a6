"""CSV layouts of business bank-statement exports, for ``/_sandbox/exports/bank_statement.csv``.

The bank layouts were reconstructed from the banks' public help pages on exporting transactions
and from sample files that accounting-software importers (Xero, QuickBooks, FreeAgent, Sage bank
statement import guides) publish: column names, order, date formats and how money is signed are
as those sources show them; the transaction-type codes are the ones the banks print on
statements. They are close reconstructions, not byte copies of a real export.

| layout   | bank           | header | date                 | money columns                | bal. |
|----------|----------------|--------|----------------------|------------------------------|------|
| generic  | (none)         | yes    | yyyy-mm-dd           | Amount, signed               | yes  |
| barclays | Barclays       | yes    | dd/mm/yyyy           | Amount, signed               | no   |
| hsbc     | HSBC UK        | no     | dd/mm/yyyy           | Amount, signed               | no   |
| lloyds   | Lloyds Bank    | yes    | dd/mm/yyyy           | Debit Amount, Credit Amount  | yes  |
| natwest  | NatWest        | yes    | dd/mm/yyyy           | Value, signed                | yes  |
| starling | Starling Bank  | yes    | dd/mm/yyyy           | Amount (GBP), signed         | yes  |
| monzo    | Monzo Business | yes    | dd/mm/yyyy, HH:MM:SS | Amount; Money Out / Money In | no   |

Columns, in order:

- generic: Date, Type, Counterparty, Reference, Amount, Balance.
- barclays: Number (blank), Date, Account (``20-00-00 12345678``), Amount, Subcategory
  (DIRECTDEP, FT, DIRECTDEBIT, PAYMENT, STANDING ORDER, OTHER), Memo (payee and reference padded
  to 18 characters, then the statement code: BGC, FT, DDR, BCC, STO, CHG).
- hsbc: Date, Description, Amount (the download has no header row).
- lloyds: Transaction Date, Transaction Type (FPI, FPO, BGC, DD, DEB, SO, CHG), Sort Code
  (``'30-00-00``: a leading apostrophe keeps spreadsheets from reading it as a date), Account
  Number, Transaction Description, Debit Amount, Credit Amount, Balance.
- natwest: Date, Type (BAC, OTR, D/D, POS, S/O, CHG), Description (``'PAYEE , REFERENCE``), Value,
  Balance, Account Name, Account Number (``'600000-12345678``).
- starling: Date, Counter Party, Reference, Type (FASTER PAYMENT, BACS, DIRECT DEBIT, CHIP AND PIN,
  STANDING ORDER), Amount (GBP), Balance (GBP), Spending Category, Notes.
- monzo: Transaction ID, Date, Time, Type, Name, Emoji, Category, Amount, Currency, Local amount,
  Local currency, Notes and #tags, Address, Receipt, Description, Category split, Money Out,
  Money In.

Transaction kinds (:data:`KINDS`) map to each bank's codes: Lloyds FPI/FPO/BGC/DD/DEB/SO/CHG,
NatWest BAC/OTR/D/D/POS/S/O/CHG, Barclays DIRECTDEP/FT/DIRECTDEBIT/PAYMENT/STANDING ORDER/OTHER...
Money is exact: :class:`~decimal.Decimal` with 2 places, never a float.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, time
from decimal import Decimal

FASTER_IN, FASTER_OUT, BACS_IN = "FASTER_IN", "FASTER_OUT", "BACS_IN"
DIRECT_DEBIT, CARD, STANDING_ORDER, CHARGE = "DIRECT_DEBIT", "CARD", "STANDING_ORDER", "CHARGE"
KINDS = (FASTER_IN, FASTER_OUT, BACS_IN, DIRECT_DEBIT, CARD, STANDING_ORDER, CHARGE)
CENT = Decimal("0.01")


@dataclass(frozen=True)
class Account:
    name: str
    sort_code: str  # 20-00-00
    number: str  # 8 digits


@dataclass(frozen=True)
class Txn:
    """One statement line: ``amount`` signed (+ paid in), ``balance`` after it."""

    id: str
    day: date
    at: time
    kind: str
    counterparty: str
    reference: str
    amount: Decimal
    balance: Decimal
    category: str  # INCOME, PAYOUT, RENT, SOFTWARE, UTILITIES, FUEL, SUPPLIES, BANK_CHARGES


Render = Callable[[Txn, Account], list[str]]


@dataclass(frozen=True)
class Layout:
    name: str
    bank: str
    header: list[str] | None
    render: Render


def money(amount: Decimal) -> str:
    return str(amount.quantize(CENT))


def _dmy(day: date) -> str:
    return day.strftime("%d/%m/%Y")


def _in(txn: Txn) -> str:
    return money(txn.amount) if txn.amount > 0 else ""


def _out(txn: Txn) -> str:
    return money(-txn.amount) if txn.amount < 0 else ""


def _text(txn: Txn, sep: str = " ") -> str:
    return sep.join(part for part in (txn.counterparty, txn.reference) if part)


def _generic(txn: Txn, _account: Account) -> list[str]:
    return [
        txn.day.isoformat(),
        txn.kind,
        txn.counterparty,
        txn.reference,
        money(txn.amount),
        money(txn.balance),
    ]


_BARCLAYS = {
    FASTER_IN: ("FT", "FT"),
    FASTER_OUT: ("FT", "FT"),
    BACS_IN: ("DIRECTDEP", "BGC"),
    DIRECT_DEBIT: ("DIRECTDEBIT", "DDR"),
    CARD: ("PAYMENT", "BCC"),
    STANDING_ORDER: ("STANDING ORDER", "STO"),
    CHARGE: ("OTHER", "CHG"),
}


def _barclays(txn: Txn, account: Account) -> list[str]:
    subcategory, code = _BARCLAYS[txn.kind]
    # Payee and reference each fill an 18-character slot (longer ones are cut), then the code.
    memo = f"{txn.counterparty.upper()[:18]:<18}{txn.reference.upper()[:18]:<18}{code}"
    return [
        " ",
        _dmy(txn.day),
        f"{account.sort_code} {account.number}",
        money(txn.amount),
        subcategory,
        memo,
    ]


def _hsbc(txn: Txn, _account: Account) -> list[str]:
    return [_dmy(txn.day), _text(txn).upper(), money(txn.amount)]


_LLOYDS = {
    FASTER_IN: "FPI",
    FASTER_OUT: "FPO",
    BACS_IN: "BGC",
    DIRECT_DEBIT: "DD",
    CARD: "DEB",
    STANDING_ORDER: "SO",
    CHARGE: "CHG",
}


def _lloyds(txn: Txn, account: Account) -> list[str]:
    return [
        _dmy(txn.day),
        _LLOYDS[txn.kind],
        f"'{account.sort_code}",
        account.number,
        _text(txn).upper(),
        _out(txn),
        _in(txn),
        money(txn.balance),
    ]


_NATWEST = {
    FASTER_IN: "BAC",
    FASTER_OUT: "OTR",
    BACS_IN: "BAC",
    DIRECT_DEBIT: "D/D",
    CARD: "POS",
    STANDING_ORDER: "S/O",
    CHARGE: "CHG",
}


def _natwest(txn: Txn, account: Account) -> list[str]:
    return [
        _dmy(txn.day),
        _NATWEST[txn.kind],
        f"'{_text(txn, ' , ').upper()}",
        money(txn.amount),
        money(txn.balance),
        account.name.upper(),
        f"'{account.sort_code.replace('-', '')}-{account.number}",
    ]


_STARLING = {
    FASTER_IN: "FASTER PAYMENT",
    FASTER_OUT: "FASTER PAYMENT",
    BACS_IN: "BACS",
    DIRECT_DEBIT: "DIRECT DEBIT",
    CARD: "CHIP AND PIN",
    STANDING_ORDER: "STANDING ORDER",
    CHARGE: "BANK CHARGE",
}
_STARLING_CATEGORY = {
    "INCOME": "INCOME",
    "PAYOUT": "INCOME",
    "RENT": "BILLS_AND_SERVICES",
    "SOFTWARE": "BILLS_AND_SERVICES",
    "UTILITIES": "BILLS_AND_SERVICES",
    "FUEL": "TRANSPORT",
    "SUPPLIES": "GENERAL",
    "BANK_CHARGES": "GENERAL",
}


def _starling(txn: Txn, _account: Account) -> list[str]:
    return [
        _dmy(txn.day),
        txn.counterparty,
        txn.reference,
        _STARLING[txn.kind],
        money(txn.amount),
        money(txn.balance),
        _STARLING_CATEGORY[txn.category],
        "",
    ]


_MONZO = {
    FASTER_IN: "Faster payment",
    FASTER_OUT: "Faster payment",
    BACS_IN: "Bacs (Direct Credit)",
    DIRECT_DEBIT: "Direct Debit",
    CARD: "Card payment",
    STANDING_ORDER: "Standing order",
    CHARGE: "Monzo fee",
}
_MONZO_CATEGORY = {
    "INCOME": "Income",
    "PAYOUT": "Income",
    "RENT": "Bills",
    "SOFTWARE": "Bills",
    "UTILITIES": "Bills",
    "FUEL": "Transport",
    "SUPPLIES": "General",
    "BANK_CHARGES": "General",
}


def _monzo(txn: Txn, _account: Account) -> list[str]:
    category = _MONZO_CATEGORY[txn.category]
    return [
        txn.id,
        _dmy(txn.day),
        txn.at.strftime("%H:%M:%S"),
        _MONZO[txn.kind],
        txn.counterparty,
        "",
        category,
        money(txn.amount),
        "GBP",
        money(txn.amount),
        "GBP",
        txn.reference,
        "",
        "",
        _text(txn).upper(),
        "",
        money(txn.amount) if txn.amount < 0 else "",
        _in(txn),
    ]


LAYOUTS: dict[str, Layout] = {
    layout.name: layout
    for layout in (
        Layout(
            "generic",
            "any",
            ["Date", "Type", "Counterparty", "Reference", "Amount", "Balance"],
            _generic,
        ),
        Layout(
            "barclays",
            "Barclays",
            ["Number", "Date", "Account", "Amount", "Subcategory", "Memo"],
            _barclays,
        ),
        Layout("hsbc", "HSBC UK", None, _hsbc),
        Layout(
            "lloyds",
            "Lloyds Bank",
            [
                "Transaction Date",
                "Transaction Type",
                "Sort Code",
                "Account Number",
                "Transaction Description",
                "Debit Amount",
                "Credit Amount",
                "Balance",
            ],
            _lloyds,
        ),
        Layout(
            "natwest",
            "NatWest",
            ["Date", "Type", "Description", "Value", "Balance", "Account Name", "Account Number"],
            _natwest,
        ),
        Layout(
            "starling",
            "Starling Bank",
            [
                "Date",
                "Counter Party",
                "Reference",
                "Type",
                "Amount (GBP)",
                "Balance (GBP)",
                "Spending Category",
                "Notes",
            ],
            _starling,
        ),
        Layout(
            "monzo",
            "Monzo Business",
            [
                "Transaction ID",
                "Date",
                "Time",
                "Type",
                "Name",
                "Emoji",
                "Category",
                "Amount",
                "Currency",
                "Local amount",
                "Local currency",
                "Notes and #tags",
                "Address",
                "Receipt",
                "Description",
                "Category split",
                "Money Out",
                "Money In",
            ],
            _monzo,
        ),
    )
}
