//! [`ToolOutput`]: what a successful call returns.

use std::fmt;

use serde_json::Value;

use crate::recover::Recovered;

/// A tool's successful result, as JSON text.
///
/// ```
/// # futures::executor::block_on(async {
/// use typed_tools::{tool, Toolbox};
///
/// /// Add two numbers.
/// #[tool(effects = Pure)]
/// fn add(a: i64, b: i64) -> i64 { a + b }
///
/// let toolbox = Toolbox::builder().tool(Add).build()?;
/// let output = toolbox.call("add", r#"{"a": 2, "b": 3}"#).await?;
/// assert_eq!(output.json(), "5");
/// assert_eq!(output.to_value(), serde_json::json!(5));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Clone, PartialEq)]
pub struct ToolOutput {
    json: String,
    /// What recovery did; `None` when it did nothing (the usual case), so
    /// that an output is one word more than its text to build, move and drop.
    recovery: Option<Box<[Recovered]>>,
}

impl ToolOutput {
    #[inline]
    pub(crate) fn from_json(json: String) -> ToolOutput {
        ToolOutput {
            json,
            recovery: None,
        }
    }

    pub(crate) fn recovered(json: String, recovery: Vec<Recovered>) -> ToolOutput {
        ToolOutput {
            json,
            recovery: (!recovery.is_empty()).then(|| recovery.into_boxed_slice()),
        }
    }

    /// What recovery did before the call succeeded: repairs, coercions,
    /// rewrites, retries (see [`recover`](crate::recover)). Empty when the
    /// model's call was right the first time.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::recover::Policy;
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Get one note by its id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32) -> String { format!("note {id}") }
    ///
    /// let toolbox = Toolbox::builder().tool(GetNote).policy(Policy::recover()).build()?;
    /// let output = toolbox.call("get_note", r#"{"id": "7"}"#).await?;
    /// assert_eq!(output.recovery().len(), 1);
    /// assert_eq!(output.recovery()[0].to_string(), "$.id: the string \"7\" was read as the number 7");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn recovery(&self) -> &[Recovered] {
        self.recovery.as_deref().unwrap_or_default()
    }

    /// A message for the model when its call had to be repaired or coerced,
    /// so that it sends a better one next time; `None` otherwise (retries of a
    /// failing tool are not the model's doing).
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::recover::Policy;
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Get one note by its id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32) -> String { format!("note {id}") }
    ///
    /// let toolbox = Toolbox::builder().tool(GetNote).policy(Policy::recover()).build()?;
    /// let output = toolbox.call("get_note", r#"{"id": "7"}"#).await?;
    /// assert_eq!(
    ///     output.note_for_model().unwrap(),
    ///     "Your call was repaired before it ran: $.id: the string \"7\" was read as the number 7. \
    ///      Send valid arguments of the right types next time."
    /// );
    /// assert_eq!(toolbox.call("get_note", r#"{"id": 7}"#).await?.note_for_model(), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn note_for_model(&self) -> Option<String> {
        let changes: Vec<String> = self
            .recovery()
            .iter()
            .filter(|r| !matches!(r, Recovered::Retried { .. }))
            .map(ToString::to_string)
            .collect();
        (!changes.is_empty()).then(|| {
            format!(
                "Your call was repaired before it ran: {}. Send valid arguments of the right types next time.",
                changes.join("; ")
            )
        })
    }

    /// The output as JSON text, ready to hand back to the model.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Get one note by its id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32) -> String { format!("note {id}") }
    ///
    /// let toolbox = Toolbox::builder().tool(GetNote).build()?;
    /// let output = toolbox.call("get_note", r#"{"id": 7}"#).await?;
    /// assert_eq!(output.json(), r#""note 7""#);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn json(&self) -> &str {
        &self.json
    }

    /// The output as JSON text, owned.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Get one note by its id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32) -> String { format!("note {id}") }
    ///
    /// let toolbox = Toolbox::builder().tool(GetNote).build()?;
    /// let output = toolbox.call("get_note", r#"{"id": 7}"#).await?;
    /// let text: String = output.into_json();
    /// assert_eq!(text, r#""note 7""#);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn into_json(self) -> String {
        self.json
    }

    /// The output as a JSON value.
    ///
    /// ```
    /// # futures::executor::block_on(async {
    /// use typed_tools::{tool, Toolbox};
    ///
    /// /// Get one note by its id.
    /// #[tool(effects = Read)]
    /// fn get_note(id: u32) -> String { format!("note {id}") }
    ///
    /// let toolbox = Toolbox::builder().tool(GetNote).build()?;
    /// let output = toolbox.call("get_note", r#"{"id": 7}"#).await?;
    /// assert_eq!(output.to_value(), serde_json::json!("note 7"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn to_value(&self) -> Value {
        // The text was written by serde_json, so it parses.
        serde_json::from_str(&self.json).unwrap_or(Value::Null)
    }
}

impl fmt::Debug for ToolOutput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolOutput")
            .field("json", &self.json)
            .field("recovery", &self.recovery())
            .finish()
    }
}

impl fmt::Display for ToolOutput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.json)
    }
}
