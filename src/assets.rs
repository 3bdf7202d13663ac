//! assets (in progress)
