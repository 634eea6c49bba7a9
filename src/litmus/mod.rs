//! The litmus front end (DESIGN.md §7): OpenCL litmus tests in herd's
//! syntax, parsed ([`parse`]), run through the engine ([`mod@run`]) and compared
//! with the reference's verdicts ([`check`]).

pub mod ast;
pub mod check;
pub mod parse;
pub mod run;

pub use parse::{parse_litmus, ParseError};
pub use run::{run, LitmusResult, Mode};
