//! Getting graphs in: generators now; file readers and writers come next.

pub mod generate;
