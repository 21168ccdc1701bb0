"""The inbound gate: prompt injection, invisible text and expensive scripts in what an
agent reads (docs/inbound.md)."""
