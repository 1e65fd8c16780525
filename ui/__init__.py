"""Streamlit-side helpers of the Transcript Lens app (pages import these; analytics never does)."""
