"""Kubernetes resource quantities, parsed to the canonical int64 units the engine uses.

CPU becomes millicores (kube's MilliValue, rounded up), everything else its Value() (rounded
up), exactly as the scheduler reads them. The server caches parsed quantities of requests that
converted in full (server/validation.py); nothing is cached here.
"""

from __future__ import annotations

import re
from decimal import ROUND_CEILING, Decimal, InvalidOperation

from .errors import InvalidArgument
from .model import CPU, MAX_QUANTITY

__all__ = ["parse_quantity", "to_canonical", "QuantityError"]

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "": Decimal(1),
    "k": Decimal("1e3"),
    "M": Decimal("1e6"),
    "G": Decimal("1e9"),
    "T": Decimal("1e12"),
    "P": Decimal("1e15"),
    "E": Decimal("1e18"),
}
_RE = re.compile(
    r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"  # number
    r"(?:([eE][+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]))?$"  # exponent or suffix
)
# longer strings are refused before they are parsed (no quantity a cluster uses is this long)
MAX_QUANTITY_CHARS = 64


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity."""


def parse_quantity(text: str) -> Decimal:
    """Exact value of a quantity string; raises QuantityError."""
    m = _RE.match(text.strip()) if text else None
    if m is None or text != text.strip():
        raise QuantityError(f"invalid quantity {text!r}")
    number, exponent, suffix = m.groups()
    try:
        value = Decimal(number)
        if exponent:
            value = value.scaleb(int(exponent[1:]))
        elif suffix in _BINARY:
            value *= _BINARY[suffix]
        elif suffix:
            value *= _DECIMAL[suffix]
    except InvalidOperation as exc:  # pragma: no cover - the regex admits only numbers
        raise QuantityError(f"invalid quantity {text!r}") from exc
    return value


def _canonical(resource: str, text: str) -> int:
    value = parse_quantity(text)
    if value < 0:
        raise QuantityError(f"negative quantity {text!r}")
    scaled = value * 1000 if resource == CPU else value
    out = int(scaled.to_integral_value(rounding=ROUND_CEILING))
    if out > MAX_QUANTITY:
        raise QuantityError(f"quantity {text!r} is above the limit {MAX_QUANTITY} ({resource})")
    return out


def to_canonical(resource: str, text: str, field: str) -> int:
    """Canonical units for `resource`; a bad string is InvalidArgument naming `field`."""
    if len(text) > MAX_QUANTITY_CHARS:
        raise InvalidArgument(field, f"a quantity has at most {MAX_QUANTITY_CHARS} characters")
    try:
        return _canonical(resource, text)
    except QuantityError as exc:
        raise InvalidArgument(field, str(exc)) from None
