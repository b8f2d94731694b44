package dashboard

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"time"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// staticVersion busts caches: the assets' URL changes with their content, so they can be
// cached for good.
var staticVersion = func() string {
	h := sha256.New()
	_ = fs.WalkDir(staticFS, "static", func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			b, _ := staticFS.ReadFile(p)
			h.Write([]byte(p))
			h.Write(b)
		}
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))[:12]
}()

var templates = template.Must(template.New("").Funcs(template.FuncMap{
	"static": func(file string) string { return "static/" + staticVersion + "/" + file },
	"date":   func(t time.Time) string { return t.Format("2006-01-02 15:04 UTC") },
	"status": statusText,
}).ParseFS(templateFS, "templates/*.html"))

// page is what every template gets.
type page struct {
	Title   string
	Session *session
	Next    string
	Keys    []keyRow
	NewKey  string
	// Error is an API's message for the whole page.
	Error      string
	Currencies []string
	Recipients []recipientRow
	Form       *recipientForm
	// the quote and transfer pages
	Transfer     *transferForm
	TransferPage *transferPage
	Transfers    *transferList
}

// CSRF is the session's token for the page's forms and script.
func (p page) CSRF() string {
	if p.Session == nil {
		return ""
	}
	return p.Session.csrf
}

// Account is the signed-in account's name.
func (p page) Account() string {
	if p.Session == nil {
		return ""
	}
	return p.Session.account
}

func (d *Dashboard) render(w http.ResponseWriter, name string, p page) {
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, name+".html", p); err != nil {
		d.cfg.Log.Error(err, "rendering a page", "page", name)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(buf.Bytes())
}

func serveStatic(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("version") != staticVersion {
		http.NotFound(w, r)
		return
	}
	b, err := staticFS.ReadFile(path.Join("static", path.Base(r.PathValue("file"))))
	if err != nil {
		http.NotFound(w, r)
		return
	}
	switch path.Ext(r.PathValue("file")) {
	case ".js":
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	case ".css":
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
	}
	w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	_, _ = w.Write(b)
}
