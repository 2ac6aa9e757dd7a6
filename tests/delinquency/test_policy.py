"""The policy file: the shipped default, and a clear error (file, line, key) for each mistake."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from tasks.delinquency.policy import DEFAULT_POLICY, PolicyError, load_policy, parse_policy

MINIMAL = """\
name: test
states:
  - name: paused
    enter: [{days_overdue: 30}]
    leave: [{overdue_amount_below: "1.00"}]
    on_enter: [pause_auto_collect]
    on_leave: [resume_collection]
"""


def error_of(text: str) -> str:
    with pytest.raises(PolicyError) as caught:
        parse_policy(text, source="p.yaml")
    return str(caught.value)


def test_the_shipped_default_loads_and_reads_as_a_ladder() -> None:
    policy = load_policy()
    assert DEFAULT_POLICY.parent.name == "delinquency"
    assert policy.state_names == ("warning", "paused", "escalated")
    assert [s.pauses for s in policy.states] == [False, True, True]
    assert policy.apply.automatic is False
    assert policy.apply.max_amount == Decimal("5000.00")
    assert policy.warnings() == []


def test_amounts_are_read_exactly_whether_quoted_or_not() -> None:
    policy = parse_policy(MINIMAL.replace('"1.00"', "0.10") + "apply: {max_amount: 1234.56}\n")
    leave = policy.states[0].leave
    assert leave is not None
    assert leave.all[0].overdue_amount_below == Decimal("0.10")
    assert policy.apply.max_amount == Decimal("1234.56")
    assert parse_policy(MINIMAL.replace('"1.00"', '"£1,000.50"')).states[0].leave.all[
        0
    ].value == Decimal("1000.50")  # type: ignore[union-attr]


def test_a_list_means_all_and_a_mapping_may_add_any() -> None:
    text = MINIMAL.replace(
        "enter: [{days_overdue: 30}]",
        "enter:\n      all: [{unpaid_amount_at_least: 10}]\n"
        "      any: [{days_overdue: 30}, {failed_attempts: 2}]",
    )
    enter = parse_policy(text).states[0].enter
    assert [c.kind for c in enter.all] == ["unpaid_amount_at_least"]
    assert [c.kind for c in enter.any] == ["days_overdue", "failed_attempts"]
    assert enter.any[1].value.count == 2 and enter.any[1].value.within_days is None


def test_the_digest_changes_with_the_rules_only() -> None:
    one, two = parse_policy(MINIMAL), parse_policy("# a comment\n" + MINIMAL)
    assert one.digest == two.digest
    assert parse_policy(MINIMAL.replace("30", "31")).digest != one.digest


# (policy text, where, what the error says): one mistake each. Also swept through the job
# itself by tests/delinquency/test_hostile_policies.py.
MISTAKES = [
    (MINIMAL.replace(change, broken), where, says)
    for change, broken, where, says in [
        ("days_overdue: 30", "days_overdue: -1", "line 4", "greater than or equal to 0"),
        (
            "{days_overdue: 30}",
            "{days_overdue: 30, unpaid_amount_at_least: 5}",
            "line 4",
            "exactly one key",
        ),
        ('"1.00"', '"1.001"', "line 5", "more than two decimal places"),
        ("pause_auto_collect", "pause", "line 6", "'pause_auto_collect'"),
        ("name: paused", "name: Paused Now", "line 3", "a state name is lower case"),
        ("days_overdue: 30", "days_overdue:", "line 4", "days_overdue: give a value"),
        ("days_overdue: 30", "on_date: 2027-02-30", "line 4", "day is out of range"),
        ('"1.00"', '"10,50"', "line 5", "may only separate thousands"),
    ]
] + [
    (MINIMAL + "colour: blue\n", "line 8", "colour: Extra inputs are not permitted"),
    ("name: x\nstates: [\n", "line 3", "not valid YAML"),
]


@pytest.mark.parametrize(("text", "where", "says"), MISTAKES)
def test_each_mistake_names_the_line_and_the_key(text: str, where: str, says: str) -> None:
    message = error_of(text)
    assert message.startswith(f"p.yaml, {where}")
    assert says in message


def test_an_unknown_key_is_named() -> None:
    message = error_of(MINIMAL + "colour: blue\n")
    assert "line 8" in message and "colour: Extra inputs are not permitted" in message


def test_a_stay_condition_cannot_be_an_enter_condition() -> None:
    message = error_of(MINIMAL.replace("days_overdue: 30", "after_days: 30"))
    assert "after_days describes a stay in the state" in message and "states[0]" in message


def test_two_states_of_one_name_are_refused() -> None:
    second = "  - name: paused\n    enter: [{days_overdue: 60}]\n"
    assert "the name paused is used twice" in error_of(MINIMAL + second)


def test_resume_without_any_pause_is_refused() -> None:
    text = MINIMAL.replace("on_enter: [pause_auto_collect]", "on_enter: [report]")
    assert "no state pauses it" in error_of(text)


def test_unknown_mandate_status_is_named() -> None:
    text = MINIMAL.replace("days_overdue: 30", "mandate_status: [CANCELED]")
    assert "unknown mandate status CANCELED" in error_of(text)


def test_broken_yaml_names_the_line() -> None:
    message = error_of("name: x\nstates: [\n")
    assert message.startswith("p.yaml, line 3") and "not valid YAML" in message


def test_a_document_that_is_not_a_mapping_is_refused() -> None:
    assert "a policy is a YAML mapping" in error_of("- just\n- a list\n")


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match=r"nope\.yaml: no such policy file"):
        load_policy(tmp_path / "nope.yaml")


def test_warnings_name_likely_mistakes() -> None:
    text = MINIMAL.replace('    leave: [{overdue_amount_below: "1.00"}]\n', "").replace(
        "    on_leave: [resume_collection]\n", ""
    )
    warnings = parse_policy(text).warnings()
    assert any("no leave conditions and no min_days" in w for w in warnings)
    assert any("does not resume it on leaving" in w for w in warnings)


@pytest.mark.parametrize(
    ("written", "where"),
    [
        ('"10,50"', "line 5"),  # a decimal comma: was read as £1,050.00
        ('"5.000,00"', "line 5"),  # continental thousands: was read as £5.00
        ('"1,0,0"', "line 5"),  # was read as £100.00
    ],
)
def test_a_comma_that_is_not_a_thousands_separator_is_refused(written: str, where: str) -> None:
    message = error_of(MINIMAL.replace('"1.00"', written))
    assert message.startswith(f"p.yaml, {where}"), message
    assert "thousands" in message, message


def test_a_cap_written_with_a_decimal_comma_is_refused_not_multiplied() -> None:
    message = error_of(MINIMAL + 'apply: {max_amount: "5000,00"}\n')
    assert message.startswith("p.yaml, line 8") and "apply.max_amount" in message, message
    assert parse_policy(MINIMAL + 'apply: {max_amount: "5,000.00"}\n').apply.max_amount == Decimal(
        "5000.00"
    )


# Each of these once escaped as a traceback (StopIteration, decimal.InvalidOperation, a bare
# ValueError from the YAML date reader) instead of an error naming the line.
@pytest.mark.parametrize(
    ("change", "broken", "where", "says"),
    [
        ("days_overdue: 30", "days_overdue:", "line 4", "days_overdue: give a value"),
        ("days_overdue: 30", "days_overdue: null", "line 4", "days_overdue: give a value"),
        ('"1.00"', '"1e30"', "line 5", "too large"),
        ('"1.00"', "1e30", "line 5", "too large"),
        ('"1.00"', ".inf", "line 5", "'.inf'"),
        ('"1.00"', ".nan", "line 5", "'.nan'"),
        ("days_overdue: 30", "on_date: 2027-02-30", "line 4", "day is out of range"),
        ("days_overdue: 30", "on_date: 2027-13-01", "line 4", "month must be in 1..12"),
        # A blank entry was read as the status NONE (str(None)), matching every customer
        # without a mandate.
        ("days_overdue: 30", "mandate_status: [CANCELLED, null]", "line 4", "a list of mandate"),
    ],
)
def test_a_value_that_cannot_be_read_names_the_line_not_a_traceback(
    change: str, broken: str, where: str, says: str
) -> None:
    message = error_of(MINIMAL.replace(change, broken))
    assert message.startswith(f"p.yaml, {where}"), message
    assert says in message, message


# YAML 1.1 reads these as numbers nobody meant: a yes/no as 1, base 60, hexadecimal, octal.
@pytest.mark.parametrize(
    ("written", "says"),
    [
        ("true", "not a yes/no value"),  # was one day overdue
        ("yes", "not a yes/no value"),
        ("1:30", "'1:30' is not a whole number in decimal digits"),  # was 90 days
        ("0x1e", "'0x1e' is not a whole number in decimal digits"),  # was 30
        ("1_0", "'1_0' is not a whole number in decimal digits"),  # was 10
    ],
)
def test_a_number_of_days_that_yaml_reads_some_other_way_is_refused(
    written: str, says: str
) -> None:
    message = error_of(MINIMAL.replace("days_overdue: 30", f"days_overdue: {written}"))
    assert message.startswith("p.yaml, line 4"), message
    assert says in message, message


def test_a_cap_of_customers_given_as_yes_is_refused_not_one() -> None:
    message = error_of(MINIMAL + "apply: {max_customers: yes}\n")
    assert message.startswith("p.yaml, line 8") and "apply.max_customers" in message, message
    assert "not a yes/no value" in message, message


def test_a_number_with_a_leading_zero_is_read_in_decimal_not_octal() -> None:
    policy = parse_policy(MINIMAL.replace("days_overdue: 30", "days_overdue: 017"))
    assert "days_overdue=17" in repr(policy.states[0].enter), policy.states[0].enter


def test_a_cap_too_large_to_hold_names_the_line() -> None:
    message = error_of(MINIMAL + "apply: {max_amount: 1e30}\n")
    assert message.startswith("p.yaml, line 8") and "too large" in message, message


def test_a_key_given_twice_is_refused_not_silently_overridden() -> None:
    # YAML readers keep the last of two equal keys: the cap below was read as 500 customers.
    text = MINIMAL + (
        "apply:\n"
        "  automatic: true\n"
        "  max_customers: 5\n"
        '  max_amount: "100.00"\n'
        "  max_customers: 500\n"
    )
    message = error_of(text)
    assert message.startswith("p.yaml, line 12"), message
    assert "max_customers" in message and "twice" in message and "line 10" in message, message
    second_enter = MINIMAL.replace("    leave:", "    enter: [{days_overdue: 300}]\n    leave:")
    assert "'enter' is given twice" in error_of(second_enter)
