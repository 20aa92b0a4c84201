//! Known-answer tests of the blocks.
