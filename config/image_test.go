package config_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// instruction is one Dockerfile instruction, its continuation lines joined.
type instruction struct {
	line int
	cmd  string // upper case: FROM, COPY, RUN, ...
	args string
}

// stage is one FROM of the Dockerfile and its instructions.
type stage struct {
	image, name string
	body        []instruction
}

// parseDockerfile reads the instructions of a Dockerfile: comments, parser directives and
// blank lines dropped, backslash continuations joined. No Dockerfile parser is served from
// the module proxy without pulling BuildKit in, and this is all the checks need.
func parseDockerfile(t *testing.T, file string) []stage {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		stages  []stage
		pending string
		start   int
		n       int
	)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if pending == "" && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if pending == "" {
			start = n
		}
		if cont, ok := strings.CutSuffix(line, `\`); ok {
			pending += cont + " "
			continue
		}
		pending += line
		cmd, args, _ := strings.Cut(pending, " ")
		in := instruction{line: start, cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)}
		pending = ""
		if in.cmd == "FROM" {
			fields := strings.Fields(in.args)
			fields = slices.DeleteFunc(fields, func(s string) bool { return strings.HasPrefix(s, "--") })
			st := stage{image: fields[0]}
			if len(fields) == 3 && strings.EqualFold(fields[1], "AS") {
				st.name = fields[2]
			}
			stages = append(stages, st)
			continue
		}
		if len(stages) == 0 {
			if in.cmd != "ARG" {
				t.Fatalf("Dockerfile:%d: %s before the first FROM", in.line, in.cmd)
			}
			continue
		}
		stages[len(stages)-1].body = append(stages[len(stages)-1].body, in)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return stages
}

// flagsAndWords splits instruction arguments into --flags and words.
func flagsAndWords(args string) (map[string]string, []string) {
	flags := map[string]string{}
	var words []string
	for _, w := range strings.Fields(args) {
		if f, ok := strings.CutPrefix(w, "--"); ok {
			k, v, _ := strings.Cut(f, "=")
			flags[k] = v
			continue
		}
		words = append(words, w)
	}
	return flags, words
}

// dockerignore is a .dockerignore: patterns in order, the last that matches a path (or one of
// its parent directories) decides; "!" re-includes.
type dockerignore []struct {
	re     *regexp.Regexp
	negate bool
}

func readDockerignore(t *testing.T, file string) dockerignore {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var d dockerignore
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		neg := strings.HasPrefix(line, "!")
		p := strings.TrimSuffix(strings.TrimPrefix(line, "!"), "/")
		var re strings.Builder
		re.WriteString("^")
		for i := 0; i < len(p); i++ {
			switch {
			case strings.HasPrefix(p[i:], "**/"):
				re.WriteString("(.*/)?")
				i += 2
			case strings.HasPrefix(p[i:], "**"):
				re.WriteString(".*")
				i++
			case p[i] == '*':
				re.WriteString("[^/]*")
			case p[i] == '?':
				re.WriteString("[^/]")
			default:
				re.WriteString(regexp.QuoteMeta(p[i : i+1]))
			}
		}
		re.WriteString("$")
		d = append(d, struct {
			re     *regexp.Regexp
			negate bool
		}{regexp.MustCompile(re.String()), neg})
	}
	return d
}

// sent reports whether the file at the context-relative path p is part of the build context.
func (d dockerignore) sent(p string) bool {
	excluded := false
	for _, pat := range d {
		for q := p; q != "." && q != "/"; q = path.Dir(q) {
			if pat.re.MatchString(q) {
				excluded = !pat.negate
				break
			}
		}
	}
	return !excluded
}

// TestDockerfile checks the image's Dockerfile against the tree: a multi-stage build whose
// final stage is distroless, non-root, running the payoutd built in the first; every source
// file payoutd is compiled from (its packages in this module, their embedded files, go.mod and
// go.sum) is in the build context and copied into the build stage; the Go version matches
// go.mod. No Docker engine runs here, so the image itself is not built.
func TestDockerfile(t *testing.T) {
	stages := parseDockerfile(t, filepath.Join(root, "Dockerfile"))
	ignore := readDockerignore(t, filepath.Join(root, ".dockerignore"))
	if len(stages) != 2 {
		t.Fatalf("want a build stage and a final stage, got %d stages", len(stages))
	}
	build, final := stages[0], stages[1]

	t.Run("the build stage uses go.mod's Go and builds ./cmd/payoutd statically", func(t *testing.T) {
		gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		goVersion := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(gomod)
		dockerfile, _ := os.ReadFile(filepath.Join(root, "Dockerfile"))
		arg := regexp.MustCompile(`(?m)^ARG GO_VERSION=(\S+)`).FindSubmatch(dockerfile)
		if goVersion == nil || arg == nil || string(arg[1]) != string(goVersion[1]) {
			t.Errorf("Dockerfile GO_VERSION %q, go.mod says go %q", arg, goVersion)
		}
		if !strings.HasPrefix(build.image, "golang:") || build.name == "" {
			t.Errorf("build stage FROM %s AS %q", build.image, build.name)
		}
		var built bool
		for _, in := range build.body {
			if in.cmd == "RUN" && strings.Contains(in.args, "go build") {
				built = strings.Contains(in.args, "CGO_ENABLED=0") && strings.HasSuffix(in.args, "./cmd/payoutd") &&
					strings.Contains(in.args, "-o /out/payoutd")
			}
		}
		if !built {
			t.Error("the build stage does not `CGO_ENABLED=0 go build -o /out/payoutd ./cmd/payoutd`")
		}
	})

	t.Run("the final stage is distroless, non-root, and runs the built payoutd", func(t *testing.T) {
		if !strings.HasPrefix(final.image, "gcr.io/distroless/") || !strings.HasSuffix(final.image, ":nonroot") {
			t.Errorf("final image %s is not distroless nonroot", final.image)
		}
		var copied, user, entrypoint string
		for _, in := range final.body {
			switch in.cmd {
			case "COPY":
				flags, words := flagsAndWords(in.args)
				if flags["from"] != build.name || len(words) != 2 || words[0] != "/out/payoutd" {
					t.Errorf("Dockerfile:%d: COPY %s", in.line, in.args)
				}
				copied = words[len(words)-1]
			case "USER":
				user = in.args
			case "ENTRYPOINT":
				var argv []string
				if err := json.Unmarshal([]byte(in.args), &argv); err != nil || len(argv) == 0 {
					t.Errorf("Dockerfile:%d: ENTRYPOINT must be an exec-form JSON array (there is no shell): %s", in.line, in.args)
					continue
				}
				entrypoint = argv[0]
			case "RUN":
				t.Errorf("Dockerfile:%d: RUN in the final stage: distroless has no shell", in.line)
			}
		}
		if u, _, _ := strings.Cut(user, ":"); u == "" || u == "0" || u == "root" || !regexp.MustCompile(`^\d+$`).MatchString(u) {
			t.Errorf("USER %q: a numeric non-root user is needed (runAsNonRoot checks a number)", user)
		}
		if user != "65532:65532" {
			t.Errorf("USER %q, the Deployments run as 65532", user)
		}
		if entrypoint == "" || entrypoint != copied {
			t.Errorf("ENTRYPOINT %q does not run the copied %q", entrypoint, copied)
		}
	})

	t.Run("every source file of payoutd reaches the build stage", func(t *testing.T) {
		var sources []string // context-relative, as copied into the build stage
		for _, in := range build.body {
			if in.cmd != "COPY" {
				continue
			}
			flags, words := flagsAndWords(in.args)
			if flags["from"] != "" {
				continue
			}
			for _, src := range words[:len(words)-1] {
				src = strings.TrimSuffix(src, "/")
				if _, err := os.Stat(filepath.Join(root, src)); err != nil {
					t.Errorf("Dockerfile:%d: COPY source %s does not exist", in.line, src)
				}
				sources = append(sources, src)
			}
		}
		copiedInto := func(p string) bool {
			for _, s := range sources {
				if p == s || strings.HasPrefix(p, s+"/") {
					return true
				}
			}
			return false
		}
		cmd := exec.Command("go", "list", "-deps", "-f", `{{if .Module}}{{if .Module.Main}}{{.Dir}}|{{join .GoFiles ","}}|{{join .EmbedFiles ","}}{{end}}{{end}}`, "./cmd/payoutd")
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list: %v", err)
		}
		files := []string{"go.mod", "go.sum"}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if line == "" {
				continue
			}
			parts := strings.Split(line, "|")
			dir, err := filepath.Rel(root, parts[0])
			if err != nil {
				t.Fatal(err)
			}
			for _, list := range parts[1:] {
				for _, f := range strings.Split(list, ",") {
					if f != "" {
						files = append(files, filepath.ToSlash(filepath.Join(dir, f)))
					}
				}
			}
		}
		if len(files) < 20 {
			t.Fatalf("go list found only %v", files)
		}
		for _, f := range files {
			if !ignore.sent(f) {
				t.Errorf("%s is left out of the build context by .dockerignore", f)
			}
			if !copiedInto(f) {
				t.Errorf("%s is not copied into the build stage", f)
			}
		}
		for _, kept := range []string{"bin/controller-gen", ".dev/env", "dist/install.yaml", "node_modules/x", ".git/HEAD", "apiserver/openapi_test.go"} {
			if ignore.sent(kept) {
				t.Errorf("%s is sent to the build context", kept)
			}
		}
	})
}
