//! Repos: importing seeds (git2 mirrors, checkout of the pinned commit, plain directories,
//! PyPI sdists) and profiling what was imported.
