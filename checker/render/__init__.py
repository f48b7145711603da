"""Renderings of traces and state graphs for people (tables, diagrams, pages)."""
