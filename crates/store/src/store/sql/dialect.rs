//! What differs between the two engines' SQL, in one place. Statements are written once in
//! the part of SQL both accept (`ON CONFLICT DO NOTHING`, `RETURNING id`, `IS NOT DISTINCT
//! FROM`, `COALESCE`, `COUNT(*) FILTER (WHERE …)`); the few things that cannot be are here:
//! SQLite's `?N` placeholders become PostgreSQL's `$N`, and [`Kind`] lets a statement choose
//! (`GREATEST` vs `MAX(a, b)`, byte-order text).

/// Which engine a statement runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Sqlite,
    Postgres,
}

impl Kind {
    /// The larger of two values (SQLite's scalar `MAX(a, b)`).
    pub fn greatest(self, a: &str, b: &str) -> String {
        match self {
            Kind::Sqlite => format!("MAX({a}, {b})"),
            Kind::Postgres => format!("GREATEST({a}, {b})"),
        }
    }

    /// The smaller of two values (SQLite's scalar `MIN(a, b)`).
    pub fn least(self, a: &str, b: &str) -> String {
        match self {
            Kind::Sqlite => format!("MIN({a}, {b})"),
            Kind::Postgres => format!("LEAST({a}, {b})"),
        }
    }

    /// Text compared and ordered byte by byte on both engines.
    pub fn bytewise(self, expr: &str) -> String {
        match self {
            Kind::Sqlite => expr.to_string(),
            Kind::Postgres => format!("{expr} COLLATE \"C\""),
        }
    }
}

/// SQLite's placeholders (`?1`, and a bare `?` meaning the next number) as PostgreSQL's `$N`,
/// leaving quoted text, quoted names and comments alone.
pub fn placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut chars = sql.chars().peekable();
    let mut next = 0u32;
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                out.push(c);
                for d in chars.by_ref() {
                    out.push(d);
                    if d == c {
                        break;
                    }
                }
            }
            '-' if chars.peek() == Some(&'-') => {
                out.push(c);
                for d in chars.by_ref() {
                    out.push(d);
                    if d == '\n' {
                        break;
                    }
                }
            }
            '?' => {
                let mut digits = String::new();
                while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                    digits.push(*d);
                    chars.next();
                }
                let n = match digits.parse::<u32>() {
                    Ok(n) => n,
                    Err(_) => next + 1,
                };
                next = next.max(n);
                out.push('$');
                out.push_str(&n.to_string());
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::placeholders;

    #[test]
    fn numbered_and_bare_placeholders_become_dollars() {
        assert_eq!(
            placeholders("SELECT a FROM t WHERE b = ?1 AND c IS NOT DISTINCT FROM ?12"),
            "SELECT a FROM t WHERE b = $1 AND c IS NOT DISTINCT FROM $12"
        );
        assert_eq!(placeholders("VALUES (?, ?, ?)"), "VALUES ($1, $2, $3)");
        assert_eq!(placeholders("a = ?2 AND b = ?"), "a = $2 AND b = $3");
    }

    #[test]
    fn quoted_text_and_comments_keep_their_question_marks() {
        assert_eq!(
            placeholders("SELECT '本当?', \"q?\" -- why?\nFROM t WHERE x = ?1"),
            "SELECT '本当?', \"q?\" -- why?\nFROM t WHERE x = $1"
        );
        assert_eq!(
            placeholders("SELECT 'it''s ?' , ?"),
            "SELECT 'it''s ?' , $1"
        );
    }
}
