//! Sandboxes (in progress)
