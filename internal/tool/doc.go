// Package tool defines the tools massgen offers to models. This first part
// holds the workflow tools of the coordination protocol (new_answer, vote,
// submit, restart_orchestration) as llm.ToolDefs; their names and parameters
// are a contract with MassGen configs and prompts. MCP, file and command
// tools join here later behind the same seam.
package tool
