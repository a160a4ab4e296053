//! Software sketches (in progress).
