//! pipeline (in progress)
