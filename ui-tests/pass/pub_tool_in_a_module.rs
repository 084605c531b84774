#![deny(warnings)]

mod notes {
    use typed_tools::tool;

    /// Read a note.
    #[tool(effects = Read)]
    pub fn read_note(
        /// The note's id.
        id: u32,
    ) -> String {
        format!("note {id}")
    }
}

fn main() {
    let input = notes::ReadNoteInput { id: 3 };
    assert_eq!(notes::read_note(input.id), "note 3");
    let _ = typed_tools::Toolbox::builder()
        .tool(notes::ReadNote)
        .build()
        .unwrap();
}
