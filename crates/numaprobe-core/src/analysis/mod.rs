//! Turning measured matrices into knowledge: performance levels, hops, links,
//! firmware (SLIT/HMAT) comparison, portable binding strategies and advice.
