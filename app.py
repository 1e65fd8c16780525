"""Transcript Lens: `streamlit run app.py [-- --db PATH]`.

The router only: the shared sidebar (open database, load a source) and the
pages. With no --db and no TRANSCRIPT_LENS_DB it opens the bundled demo store.
"""


import streamlit as st

from ui import review, sidebar, state


st.set_page_config(page_title="Transcript Lens", page_icon=":material/forum:", layout="wide")

# A page's url_path must stay its file stem: ui.state.router_guard relies on v1 and v2
# page ids agreeing. The default page is the exception: Streamlit serves it at "/" and
# at no other address, so the same file again, hidden, answers a typed or bookmarked
# /overview (query params kept) under the stem.
pages = [
    st.Page("pages/overview.py", title="Overview", icon=":material/insights:", url_path="home", default=True),
    st.Page("pages/overview.py", title="Overview", icon=":material/insights:", url_path="overview", visibility="hidden"),
    st.Page("pages/conversations.py", title="Conversations", icon=":material/table_rows:", url_path="conversations"),
    st.Page("pages/transcript.py", title="Transcript explorer", icon=":material/forum:", url_path="transcript"),
    st.Page("pages/resume_qa.py", title="Resume QA", icon=":material/restart_alt:", url_path="resume_qa"),
    st.Page("pages/backlog.py", title="Waiting on a human", icon=":material/pending_actions:", url_path="backlog"),
    st.Page("pages/review.py", title="Review", icon=":material/rate_review:", url_path="review"),
]

page = st.navigation(pages)
sidebar.render()
review.sidebar(state.current_db(), page.url_path if page.url_path not in ("", "home") else "overview")
page.run()
