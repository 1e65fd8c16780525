"""Transcript Lens: `streamlit run app.py [-- --db PATH]`.

The router only: the navigation (`ui.nav`: links that carry the shared filters and the
open database), the shared sidebar (open database, load a source) and the pages. With
no --db and no TRANSCRIPT_LENS_DB it opens the bundled demo store.
"""


import streamlit as st

from ui import nav, review, session, sidebar, state


st.set_page_config(page_title="Transcript Lens", page_icon=nav.FAVICON, layout="wide")
session.enter()  # this session's policy (masking, the user's tenants) for everything the run reads
state.new_run()

pages = nav.pages()
page = st.navigation(pages, position="hidden")
state.current_db()  # first: a shared link's database is the one the links below carry
nav.draw(st.sidebar, pages, page)  # before the page: its links hold the state this run shows
sidebar.render()
review.sidebar(state.current_db(), nav.stem(page))
page.run()
state.flush()  # a page that stopped early leaves a pending URL change to its next publish
