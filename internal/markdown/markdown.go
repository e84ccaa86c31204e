// Package markdown holds what amt's generated Markdown (the configuration
// reference, the README's agent table, the reports) needs to stay valid
// Markdown whatever text it quotes.
package markdown

import "strings"

var cell = strings.NewReplacer("|", `\|`, "<", `\<`, ">", `\>`)

// Cell escapes what Markdown would read as a table's pipe or an HTML tag in
// a table cell.
func Cell(s string) string { return cell.Replace(s) }
