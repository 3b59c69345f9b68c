//! Repeated samples and their summary: median, min, max, coefficient of variation.
