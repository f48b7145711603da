"""PIP-473, Metadata-Driven Transactions for Scalable Topics, as an executable spec."""
