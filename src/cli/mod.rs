//! The command line's pieces: its arguments, and one handler per command, each printing the
//! command's output and returning its exit code.

pub(crate) mod args;
pub(crate) mod audit;
pub(crate) mod bench;
pub(crate) mod cluster;
pub(crate) mod export;
pub(crate) mod image;
pub(crate) mod import;
pub(crate) mod merge;
pub(crate) mod mutate;
pub(crate) mod report;
pub(crate) mod run;
pub(crate) mod serve;
pub(crate) mod status;
pub(crate) mod train;
