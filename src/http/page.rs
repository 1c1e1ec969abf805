//! `?limit=&offset=`: how a per-user list (schedules, workflows, agents, knowledge bases, API
//! keys) is asked for one page at a time, and the paging fields its answer carries.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::db::Page;

/// A list's paging parameters: `limit` (1 to `Page::MAX_LIMIT`, clamped like the chat list's;
/// `Page::DEFAULT_LIMIT` when absent) and `offset` (rows skipped, 0 when absent).
#[derive(Debug, Deserialize)]
pub struct PageQuery {
    limit: Option<u64>,
    offset: Option<u64>,
}

impl PageQuery {
    pub fn page(&self) -> Page {
        Page {
            limit: self
                .limit
                .unwrap_or(Page::DEFAULT_LIMIT)
                .clamp(1, Page::MAX_LIMIT),
            offset: self.offset.unwrap_or(0),
        }
    }
}

/// The paging fields of a page of `shown` rows out of `total`: `total`, `has_more`, and
/// `next_offset` (the `offset` of the next page; `null` on the last).
pub fn paging(page: Page, shown: usize, total: u64) -> Value {
    let next = page.offset.saturating_add(shown as u64);
    let has_more = next < total;
    json!({
        "total": total,
        "has_more": has_more,
        "next_offset": has_more.then_some(next),
    })
}

/// `paging`'s fields merged into a list's answer `body` (an object).
pub fn paged(mut body: Value, page: Page, shown: usize, total: u64) -> Value {
    if let (Some(body), Value::Object(fields)) = (body.as_object_mut(), paging(page, shown, total))
    {
        body.extend(fields);
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_short_of_the_total_says_where_the_next_starts() {
        let page = Page {
            limit: 2,
            offset: 2,
        };
        let body = paged(json!({"items": [1, 2]}), page, 2, 5);
        assert_eq!(body["total"], 5);
        assert_eq!(body["has_more"], true);
        assert_eq!(body["next_offset"], 4);
        let last = paged(
            json!({}),
            Page {
                limit: 2,
                offset: 4,
            },
            1,
            5,
        );
        assert_eq!(last["has_more"], false);
        assert!(last["next_offset"].is_null());
    }

    #[test]
    fn limits_are_clamped_and_default() {
        let none = PageQuery {
            limit: None,
            offset: None,
        };
        assert_eq!(none.page(), Page::FIRST);
        let huge = PageQuery {
            limit: Some(u64::MAX),
            offset: Some(3),
        };
        assert_eq!(huge.page().limit, Page::MAX_LIMIT);
        assert_eq!(huge.page().offset, 3);
        let zero = PageQuery {
            limit: Some(0),
            offset: None,
        };
        assert_eq!(zero.page().limit, 1);
    }
}
