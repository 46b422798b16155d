"""Numbers that are credentials by their checksum: payment cards, Chinese resident ids, US SSNs.

A number alone is not enough (order numbers, timestamps and IMEIs are digit runs too):
cards must pass Luhn and start like a card (2-6), resident ids must name a province, a
real date and the right check character, SSNs must avoid the ranges never issued.
Telephone numbers are personal data, not credentials: they are left to the field
schema's sensitivity, not masked.
"""
from __future__ import annotations

import datetime
import re

from .found import Found

_CARD_RUN = re.compile(r"(?<![0-9A-Za-z.,/-])\d{4}(?:[ -]?\d){9,15}(?![0-9A-Za-z])", re.ASCII)
# Digit runs after these words are order, parcel or device numbers even when Luhn passes.
# A digit run labelled as an order, parcel or device number is one even when Luhn passes
# ("Order 4716108999716531 shipped"); "pay the order with 4111…" is still a card.
_NOT_A_CARD_BEFORE = re.compile(
    r"(?i)(?:order|invoice|tracking|parcel|shipment|ticket|ref(?:erence)?|transaction|txn|imei|serial|account"
    r"|订单|单号|运单|快递|流水|编号|工单|发票|序列号)(?:[ .]*(?:no|number|id|#|号|号码))?[ .:#：]*$"
)
_CARD_WORD_BEFORE = re.compile(r"(?i)(?:card|visa|master|amex|卡)[^0-9]{0,20}$")
# A run of 13-19 digits labelled as a card number is one even if Luhn fails (a typo, or
# one of the bank cards that never had a check digit).
_CARD_LABEL_BEFORE = re.compile(r"(?i)(?:card\s*(?:number|no\.?|#)|卡号|银行卡|信用卡|借记卡|储蓄卡)[^0-9\n]{0,6}$")

_CN_ID = re.compile(
    r"(?<![0-9A-Za-z])([1-9]\d)\d{4}((?:18|19|20)\d{2})(\d{2})(\d{2})\d{3}[0-9Xx](?![0-9A-Za-z])", re.ASCII
)
_CN_PROVINCES = frozenset(
    "11 12 13 14 15 21 22 23 31 32 33 34 35 36 37 41 42 43 44 45 46 50 51 52 53 54 61 62 63 64 65 71 81 82 83 "
    "91".split()
)
_CN_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_CN_ID_CHECK = "10X98765432"

_SSN = re.compile(r"(?<![\d-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\d-])", re.ASCII)
_SSN_NAMED = re.compile(
    r"(?i)\b(?:ssn|social security(?: number| no\.?)?)[^\S\n]*[:#=]?[^\S\n]*(\d{9}|\d{3} \d{2} \d{4})\b"
)


def luhn_valid(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        number = int(char)
        if index % 2 == 1:
            number *= 2
            if number > 9:
                number -= 9
        total += number
    return total % 10 == 0


def _card_like(digits: str) -> bool:
    return 13 <= len(digits) <= 19 and (digits[0] in "3456" or "22" <= digits[:2] <= "27") and luhn_valid(digits)


def cn_resident_id_valid(candidate: str) -> bool:
    total = sum(int(d) * w for d, w in zip(candidate[:17], _CN_ID_WEIGHTS))
    return _CN_ID_CHECK[total % 11] == candidate[17].upper()


_DIGITS = re.compile(r"\d{3}", re.ASCII)  # no number below is shorter than nine digits, in groups of 3+
_FOUR_DIGITS = re.compile(r"\d{4}", re.ASCII)
_SEVENTEEN_DIGITS = re.compile(r"\d{17}", re.ASCII)


def find_numbers(text: str) -> list[Found]:
    if not _DIGITS.search(text):
        return []
    found = []
    for run in _CARD_RUN.finditer(text) if _FOUR_DIGITS.search(text) else ():
        before = text[max(0, run.start() - 30): run.start()]
        end = _card_end(run.group(0))
        if end is None and _CARD_LABEL_BEFORE.search(before) and len(re.sub(r"\D", "", run.group(0))) <= 19:
            end = len(run.group(0))
        if end is None:
            continue
        if _NOT_A_CARD_BEFORE.search(before) and not _CARD_WORD_BEFORE.search(before):
            continue
        found.append(Found(run.start(), run.start() + end, "card_number"))
    for match in _CN_ID.finditer(text) if _SEVENTEEN_DIGITS.search(text) else ():
        province, year, month, day = match.groups()
        born = _real_date(int(year), int(month), int(day))
        if province in _CN_PROVINCES and born and cn_resident_id_valid(match.group(0)):
            found.append(Found(*match.span(0), "national_id"))
    for pattern, group in ((_SSN, 0), (_SSN_NAMED, 1)):
        for match in pattern.finditer(text):
            found.append(Found(*match.span(group), "national_id"))
    return found


def _card_end(run: str) -> int | None:
    """Length of the longest leading part of ``run`` that is a card number, if any.

    "4539 1488 0343 6467 12/28" is a card followed by an expiry month: the run of digits
    is cut back group by group until what is left passes Luhn.
    """
    cuts = [len(run)] + [i for i in range(len(run) - 1, 0, -1) if run[i] in " -"]
    for cut in cuts:
        if _card_like(re.sub(r"\D", "", run[:cut])):
            return cut
    return None


def _real_date(year: int, month: int, day: int) -> bool:
    try:
        return datetime.date(year, month, day) <= datetime.date.today()
    except ValueError:
        return False
