//! Plain-text tables: Markdown pipe tables, padded to line up, so they can
//! be pasted into the docs as they are. Shared by the herd simulator and
//! the PostgreSQL contention experiment.

/// A table: a header row and rows of cells, the first column left-aligned
/// and the others right-aligned, padded to line up.
pub(crate) struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// An empty table with these column titles.
    pub(crate) fn new(header: Vec<String>) -> Self {
        Table {
            header,
            rows: Vec::new(),
        }
    }

    /// Adds a row of cells, one per column.
    pub(crate) fn push(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }

    /// The table as Markdown, one line per row, ending with a newline.
    pub(crate) fn render(&self) -> String {
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.chars().count()).max(3);
            }
        }
        let line = |cells: &[String]| {
            let padded: Vec<String> = cells
                .iter()
                .zip(&widths)
                .enumerate()
                .map(|(i, (cell, &w))| {
                    if i == 0 {
                        format!("{cell:<w$}")
                    } else {
                        format!("{cell:>w$}")
                    }
                })
                .collect();
            format!("| {} |\n", padded.join(" | "))
        };
        let rule: Vec<String> = widths
            .iter()
            .enumerate()
            .map(|(i, &w)| {
                if i == 0 {
                    "-".repeat(w)
                } else {
                    format!("{}:", "-".repeat(w - 1))
                }
            })
            .collect();
        let mut out = line(&self.header);
        out.push_str(&line(&rule));
        for row in &self.rows {
            out.push_str(&line(row));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_line_up_and_numbers_align_right() {
        let mut table = Table::new(vec!["name".to_owned(), "n".to_owned()]);
        table.push(vec!["a".to_owned(), "1234".to_owned()]);
        assert_eq!(table.render(), "| name |    n |\n| ---- | ---: |\n| a    | 1234 |\n");
    }
}
