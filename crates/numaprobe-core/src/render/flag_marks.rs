//! Test support for the charts that mark a flagged point (loaded latency,
//! the cache sweep, and the report that embeds both): every
//! `<g class="flagged">` of a parsed SVG read as its tooltip, its circle
//! and its star, so each test finds a mark the one way the charts draw it.

/// A flagged point's mark as drawn.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FlagMark {
    /// The tooltip: the point, its figure with the star, the reason.
    pub tip: String,
    pub fill: String,
    pub stroke: String,
    /// The circle's centre, as written.
    pub cx: String,
    pub cy: String,
    /// The text beside the circle: the star.
    pub star: String,
}

/// Every flagged mark below `n`, in document order. A mark without its
/// tooltip, circle or star fails the test that reads it.
pub(crate) fn flag_marks(n: roxmltree::Node) -> Vec<FlagMark> {
    n.descendants()
        .filter(|g| g.has_tag_name("g") && g.attribute("class") == Some("flagged"))
        .map(|g| {
            let child = |tag: &str| {
                g.children()
                    .find(|c| c.has_tag_name(tag))
                    .unwrap_or_else(|| panic!("a flagged mark without its {tag}"))
            };
            let text = |tag: &str| {
                child(tag)
                    .descendants()
                    .filter(|d| d.is_text())
                    .filter_map(|d| d.text())
                    .collect::<String>()
            };
            let circle = child("circle");
            let attr = |a: &str| circle.attribute(a).unwrap_or_default().to_string();
            FlagMark {
                tip: text("title"),
                fill: attr("fill"),
                stroke: attr("stroke"),
                cx: attr("cx"),
                cy: attr("cy"),
                star: text("text"),
            }
        })
        .collect()
}
