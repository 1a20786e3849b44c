//! Small helpers the host readers share: positions, errors, numbered lines and numbers.

use crate::analyze::fabric::model::{At, ConfigError, Read};

/// Where a value stands.
pub(super) fn at(file: &str, line: usize) -> At {
    At { file: file.to_string(), line }
}

/// A value read at a line.
pub(super) fn read_at<T>(value: T, file: &str, line: usize) -> Read<T> {
    Read { value, at: at(file, line) }
}

/// A reader's error at a line.
pub(super) fn error(file: &str, line: usize, message: impl Into<String>) -> ConfigError {
    ConfigError { file: file.to_string(), line, message: message.into() }
}

/// The lines of `text` with their numbers, the first numbered `first_line`.
pub(super) fn numbered(text: &str, first_line: usize) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().map(move |(index, line)| (first_line.saturating_add(index), line))
}

/// A decimal number no larger than `max`, or `None`.
pub(super) fn number_up_to(text: &str, max: u32) -> Option<u8> {
    let value: u32 = decimal(text)?;
    if value > max {
        return None;
    }
    u8::try_from(value).ok()
}

/// A plain decimal number (digits only, no sign), or `None`.
pub(super) fn decimal(text: &str) -> Option<u32> {
    if text.is_empty() || !text.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}
