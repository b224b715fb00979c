package onion

// DeniedText is what the model reads when a call that needed approval was
// not approved: the approver said no, failed, panicked or was not there,
// or the question went unanswered. The agent loop says it, and so does
// every other door a tool is reached through (mcp/mcpserver), so that a
// model is told the same thing wherever it calls from.
const DeniedText = "the user denied this call, so the tool did not run. Do not call it again unless the user asks for it."
