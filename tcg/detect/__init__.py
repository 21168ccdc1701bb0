"""Secret, PII and reference detection: rules as data, one engine (see docs/rules.md)."""
