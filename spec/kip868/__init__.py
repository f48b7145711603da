"""KIP-868 metadata transactions in KRaft (seeds/002_2ac48257c07e208f.txt)."""
