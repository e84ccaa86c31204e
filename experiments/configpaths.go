package experiments

import (
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/amt-dev/amt/data"
	"github.com/amt-dev/amt/experiments/record"
)

// folderPath reads the path of a folder amt reads or writes: not empty,
// without a NUL byte (which no file system allows: the value would pass
// here and fail late, at the first file written), and not the path of an
// existing file that is not a folder (which would fail late with an error
// about a file inside it). A folder that does not exist yet is fine.
func folderPath() reader[string] {
	return reader[string]{want: "a folder path", parse: func(p *parser, n *yaml.Node, key string) (string, error) {
		s, err := nonEmpty("a folder path").parse(p, n, key)
		if err != nil {
			return "", err
		}
		if strings.ContainsRune(s, 0) {
			return "", p.errf(n, key, "%q holds a NUL byte; want a folder path", s)
		}
		if fi, err := os.Stat(s); err == nil && !fi.IsDir() {
			return "", p.errf(n, key, "%s exists and is not a folder; want a folder path", s)
		}
		return s, nil
	}}
}

// folderName reads a name that names a results folder: no slashes, no
// spaces.
func folderName(what string) reader[string] {
	return reader[string]{want: "a name without slashes or spaces", parse: func(p *parser, n *yaml.Node, key string) (string, error) {
		s, err := p.scalar(n, key)
		if err != nil {
			return "", err
		}
		if s == "" || strings.ContainsAny(s, "/\\ \t") {
			return "", p.errf(n, key, "%q must not be empty or contain slashes or spaces (it names %s)", s, what)
		}
		if err := record.CheckName(s); err != nil {
			return "", p.errf(n, key, "%v (it names %s)", err, what)
		}
		return s, nil
	}}
}

// filePath reads the path of an existing file (folder with dir, or when
// dir returns true), looked up beside the configuration file, then in the
// assets folder; the value is the resolved path.
func filePath(dir func(c *Config) bool) reader[string] {
	return reader[string]{want: "a path, relative to the config file or the assets folder", parse: func(p *parser, n *yaml.Node, key string) (string, error) {
		s, err := p.scalar(n, key)
		if err != nil {
			return "", err
		}
		if s == "" {
			return "", p.errf(n, key, "empty path")
		}
		isDir := dir != nil && dir(p.cfg)
		var tried []string
		check := func(c string) bool {
			tried = append(tried, c)
			st, err := os.Stat(c)
			return err == nil && st.IsDir() == isDir
		}
		if filepath.IsAbs(s) {
			if check(s) {
				return s, nil
			}
		} else {
			if c := filepath.Join(p.dir, s); check(c) {
				return c, nil
			}
			assets := p.assets
			if assets == "" {
				assets, _ = data.AssetsDir()
			}
			if assets != "" {
				if c := filepath.Join(assets, s); check(c) {
					return c, nil
				}
			}
		}
		what := "file"
		if isDir {
			what = "folder"
		}
		return "", p.errf(n, key, "%s %q not found (looked at %s)", what, s, strings.Join(tried, ", "))
	}}
}
