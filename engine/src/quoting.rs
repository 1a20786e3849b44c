//! Text from a user's file quoted in a message: all of it when short, else its start, cut on a
//! character's boundary, and its length, so that a line of megabytes is named by its start.

/// The longest start of `text` of at most `limit` bytes that ends on a character's boundary.
pub fn prefix(text: &str, limit: usize) -> &str {
    if text.len() <= limit {
        return text;
    }
    let at = (0..=limit).rev().find(|&at| text.is_char_boundary(at)).unwrap_or(0);
    text.get(..at).unwrap_or_default()
}

/// `text` quoted as a string literal: all of it up to `limit` bytes, else its [`prefix`], "…"
/// and its length in bytes.
pub fn quoted(text: &str, limit: usize) -> String {
    let start = prefix(text, limit);
    match start.len() == text.len() {
        true => format!("{text:?}"),
        false => format!("{start:?}… ({} bytes)", text.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_text_is_quoted_by_its_start_cut_on_a_character() {
        assert_eq!(quoted("abc", 3), "\"abc\"");
        assert_eq!(quoted("abcd", 3), "\"abc\"… (4 bytes)");
        // "é" is two bytes: a cut inside it falls back to before it
        assert_eq!(quoted("aé", 2), "\"a\"… (3 bytes)");
        assert_eq!(prefix("é", 1), "");
    }
}
