"""Transcript Lens: `streamlit run app.py [-- --db PATH]`.

The router only: the shared sidebar (open database, load a source) and the
pages. With no --db and no TRANSCRIPT_LENS_DB it opens the bundled demo store.
"""

from pathlib import Path

import streamlit as st

from ui import sidebar

HERE = Path(__file__).resolve().parent

st.set_page_config(page_title="Transcript Lens", page_icon=":material/forum:", layout="wide")

# url_path must stay the file stem: ui.state.router_guard relies on v1 and v2 page ids agreeing.
pages = [
    st.Page("pages/overview.py", title="Overview", icon=":material/insights:", url_path="overview", default=True),
    st.Page("pages/conversations.py", title="Conversations", icon=":material/table_rows:", url_path="conversations"),
    st.Page("pages/transcript.py", title="Transcript explorer", icon=":material/forum:", url_path="transcript"),
]
# Resume QA is another engineer's page; the app runs with or without it.
if (HERE / "pages" / "resume_qa.py").exists():
    pages.append(st.Page("pages/resume_qa.py", title="Resume QA", icon=":material/restart_alt:", url_path="resume_qa"))

page = st.navigation(pages)
sidebar.render()
page.run()
