package plots

import (
	"bytes"
	"path/filepath"
)

// config quotes the experiment's configuration file verbatim.
func (b *builder) config() error {
	b.p("## Configuration\n\n")
	if b.e.Config == nil {
		b.p("No configuration file was found in this folder or given to `amt plot -config`.\n\n")
		return nil
	}
	fence := "```"
	for bytes.Contains(b.e.Config, []byte(fence)) {
		fence += "`"
	}
	b.p("`%s`:\n\n%syaml\n%s", filepath.Base(b.e.ConfigFile), fence, b.e.Config)
	if !bytes.HasSuffix(b.e.Config, []byte("\n")) {
		b.p("\n")
	}
	b.p("%s\n", fence)
	return nil
}
