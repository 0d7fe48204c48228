//! "Did you mean" suggestions for misspelt names (FTLs, their parameters, configuration keys).

/// ", did you mean \"x\"?" for the candidate closest to `name`, if one is close (an edit
/// distance of at most 2, or a third of the candidate's length); empty otherwise.
pub fn suggestion<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    candidates
        .into_iter()
        .map(|known| (edit_distance(name, known), known))
        .filter(|&(d, known)| d <= 2.max(known.len() / 3))
        .min()
        .map_or(String::new(), |(_, known)| format!(", did you mean \"{known}\"?"))
}

/// Levenshtein distance between two names.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitution = diagonal + (ca != cb) as usize;
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

/// Adds a suggestion to serde's "unknown field `x`, expected one of `a`, `b`" message.
pub fn with_suggestion(message: String) -> String {
    let Some(rest) = message.strip_prefix("unknown field `") else { return message };
    let Some((unknown, expected)) = rest.split_once('`') else { return message };
    let hint = suggestion(unknown, expected.split('`').skip(1).step_by(2));
    if hint.is_empty() {
        message
    } else {
        format!("{message}{hint}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_names_are_suggested() {
        assert_eq!(edit_distance("dtfl", "dftl"), 2);
        assert_eq!(suggestion("dtfl", ["pftl", "dftl", "tpftl"]), ", did you mean \"dftl\"?");
        assert_eq!(suggestion("zzzzzz", ["pftl", "dftl"]), "");
        assert_eq!(
            with_suggestion("unknown field `polcy`, expected one of `policy`, `free_blocks_low`".into()),
            "unknown field `polcy`, expected one of `policy`, `free_blocks_low`, did you mean \"policy\"?"
        );
        assert_eq!(with_suggestion("invalid type".into()), "invalid type");
    }
}
