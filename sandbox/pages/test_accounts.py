"""The documented test bank accounts and test cards of the sandbox's hosted pages.

A person signing a mandate on ``/dd-mandate/{id}`` enters bank details; the account decides what
the simulation later does with the mandate and its collections (:data:`BANK_ACCOUNTS`). Any other
valid-looking account behaves like the succeeding one. On the card page ``/pay/{id}`` only the
test cards pay (:data:`CARDS`), as in the real service's staging [C: docs/service.md §1].

This module is data the README lists; :func:`bank_account_kind` and :func:`find_card` are the
look-ups the pages and the simulation use.
"""

from __future__ import annotations

from dataclasses import dataclass

# What the simulation does with a mandate signed with the account (``Mandate.test_account_kind``).
SUCCEEDS = "SUCCEEDS"  # mandate becomes ACTIVE; every collection is paid
INSUFFICIENT_FUNDS = "INSUFFICIENT_FUNDS"  # mandate becomes ACTIVE; every collection fails
PAYER_CANCELS = "PAYER_CANCELS"  # mandate becomes ACTIVE, then the payer cancels it at the bank
LATE_FAILURE = "LATE_FAILURE"  # collections are paid, then fail late (deducted from a payout)
KINDS = (SUCCEEDS, INSUFFICIENT_FUNDS, PAYER_CANCELS, LATE_FAILURE)


@dataclass(frozen=True)
class DocumentedAccount:
    kind: str
    holder: str
    sort_code: str  # NN-NN-NN
    account_number: str  # 8 digits
    behaviour: str  # what the README says happens


BANK_ACCOUNTS: tuple[DocumentedAccount, ...] = (
    # The real staging's documented direct-debit test account [C: docs/service.md §1].
    DocumentedAccount(
        SUCCEEDS, "Jane Doe", "10-88-00", "00012345", "the mandate activates; collections succeed"
    ),
    DocumentedAccount(
        INSUFFICIENT_FUNDS,
        "Sam Short",
        "10-88-00",
        "00066601",
        "the mandate activates; every collection fails for insufficient funds",
    ),
    DocumentedAccount(
        PAYER_CANCELS,
        "Carl Cancel",
        "10-88-00",
        "00066602",
        "the mandate activates, then the payer cancels it at the bank",
    ),
    DocumentedAccount(
        LATE_FAILURE,
        "Lee Late",
        "10-88-00",
        "00066603",
        "collections are paid, then fail late and are deducted from a later payout",
    ),
)


def bank_account_kind(sort_code: str, account_number: str) -> str:
    """The test-account kind of normalised bank details; any other account succeeds."""
    for account in BANK_ACCOUNTS:
        if (account.sort_code, account.account_number) == (sort_code, account_number):
            return account.kind
    return SUCCEEDS


def masked_account_number(account_number: str) -> str:
    """What the API shows of an account number (``****2345``)."""
    return "****" + account_number[-4:]


@dataclass(frozen=True)
class DocumentedCard:
    number: str  # digits only
    brand: str  # the contract's card brand
    expiry_month: int
    expiry_year: int  # four digits
    cvc: str
    declined: bool
    behaviour: str

    @property
    def display(self) -> str:
        """The number grouped in fours, as printed on the card."""
        return " ".join(self.number[i : i + 4] for i in range(0, len(self.number), 4))


CARDS: tuple[DocumentedCard, ...] = (
    # [C: docs/service.md §1] the staging test cards, with their documented expiry and CVC.
    DocumentedCard("4000056655665556", "VISA", 3, 2030, "737", False, "the payment succeeds"),
    DocumentedCard("4100000000000019", "VISA", 3, 2030, "737", True, "the payment is declined"),
)


def find_card(number: str) -> DocumentedCard | None:
    """The test card with this number (digits only), if it is one."""
    return next((card for card in CARDS if card.number == number), None)
