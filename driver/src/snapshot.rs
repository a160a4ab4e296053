//! snapshot codec (in progress)
