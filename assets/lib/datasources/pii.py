"""Name-based detection of columns holding secrets or personal data.

Sample values end up in docs people read and in an index a model reads, so a column whose
name suggests a secret (``password_hash``, ``api_key``) or personal data (``email``, ``ssn``)
is flagged ``pii: true`` and never sampled unless the datasource explicitly allows it.
Detection is by name only: it is cheap, predictable and errs on the side of flagging.

Example:
    >>> pii_reason("password_hash"), pii_reason("customerEmail"), pii_reason("city")
    ('secret', 'contact', None)
"""

from __future__ import annotations

import re

# Category -> word sequences. Matched against the column name split into lower-case words
# (``customerEmail`` -> ``customer_email``), only at word boundaries, so ``author`` is not
# ``auth`` and ``tokens_used`` is not ``token``.
_PATTERNS: dict[str, tuple[str, ...]] = {
    "secret": (
        "password",
        "passwd",
        "pwd",
        "passphrase",
        "secret",
        "token",
        "api_key",
        "apikey",
        "access_key",
        "private_key",
        "secret_key",
        "client_secret",
        "credential",
        "credentials",
        "salt",
        "otp",
        "pin",
        "session_id",
        "refresh_token",
    ),
    "government_id": (
        "ssn",
        "social_security",
        "social_security_number",
        "national_id",
        "tax_id",
        "passport",
        "passport_number",
        "driver_license",
        "drivers_license",
        "license_number",
    ),
    "financial": (
        "credit_card",
        "creditcard",
        "card_number",
        "cc_number",
        "ccnum",
        "cvv",
        "cvc",
        "iban",
        "account_number",
        "routing_number",
        "bank_account",
    ),
    "contact": ("email", "e_mail", "mail_address", "phone", "telephone", "mobile", "fax", "ip_address"),
    "personal": (
        "dob",
        "date_of_birth",
        "birth_date",
        "birthdate",
        "birthday",
        "first_name",
        "last_name",
        "full_name",
        "surname",
        "street_address",
        "home_address",
        "address_line",
    ),
}

_SPLIT_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NON_WORD = re.compile(r"[^a-z0-9]+")
_COMPILED = {
    cat: re.compile(r"(?:^|_)(?:" + "|".join(re.escape(w) for w in words) + r")(?:_|$)")
    for cat, words in _PATTERNS.items()
}


def normalize(name: str) -> str:
    """``customerEmail`` / ``Customer-Email`` -> ``customer_email``."""
    return _NON_WORD.sub("_", _SPLIT_CAMEL.sub("_", name).lower()).strip("_")


def pii_reason(column: str) -> str | None:
    """The category a column name falls in (``secret``, ``contact``...) or ``None``."""
    norm = normalize(column)
    for category, pattern in _COMPILED.items():
        if pattern.search(norm):
            return category
    return None


def is_pii(column: str) -> bool:
    return pii_reason(column) is not None
