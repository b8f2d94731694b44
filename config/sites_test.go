package config_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
)

// renderWith renders config/default with components of config/ added, as an overlay of a
// platform team does (kustomize takes no absolute path, so the overlay names them relatively).
func renderWith(t *testing.T, components ...string) ([]byte, []*unstructured.Unstructured) {
	t.Helper()
	overlay := t.TempDir()
	rel := func(dir string) string {
		p, err := filepath.Rel(overlay, filepath.Join(root, "config", dir))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	kustomization := "resources:\n- " + rel("default") + "\ncomponents:\n"
	for _, c := range components {
		kustomization += "- " + rel(c) + "\n"
	}
	if err := os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(kustomization), 0o644); err != nil {
		t.Fatal(err)
	}
	data := kustomizeBuild(t, overlay)
	return data, decode(t, data)
}

// secretsOf are the Secrets a pod template reads, as volumes or as variables.
func secretsOf(d *appsv1.Deployment) []string {
	var out []string
	pod := d.Spec.Template.Spec
	for _, v := range pod.Volumes {
		if v.Secret != nil {
			out = append(out, v.Secret.SecretName)
		}
	}
	for _, c := range append(slices.Clone(pod.InitContainers), pod.Containers...) {
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				out = append(out, e.ValueFrom.SecretKeyRef.Name)
			}
		}
		for _, e := range c.EnvFrom {
			if e.SecretRef != nil {
				out = append(out, e.SecretRef.Name)
			}
		}
	}
	return out
}

// siteComponent is one of the optional components that turn on a browser-facing part of the
// facade: its flags, the files of its Secret they name, and the Secrets only the facade reads.
type siteComponent struct {
	dir   string
	doc   string            // the page that says how to enable it
	flags []string          // flags the facade must be given
	files map[string]string // a file flag's name: the Secret mounted where its file is
	// Secrets the component adds to the facade, none of which another pod may read
	secrets []string
}

var siteComponents = []siteComponent{
	{
		dir: "dashboard", doc: "docs/operations/dashboard.md",
		flags: []string{"dashboard-url", "dashboard-oidc-issuer", "dashboard-oidc-client-id", "dashboard-account-claim"},
		files: map[string]string{
			"dashboard-oidc-client-secret-file": "payout-dashboard",
			"dashboard-token-key-file":          "payout-dashboard",
		},
		secrets: []string{"payout-dashboard"},
	},
	{
		dir: "kycsite", doc: "docs/kyc-site.md",
		flags:   []string{"kyc-site-bind-address", "kyc-site-url", "kyc-site-chain-id", "kyc-vendor-url"},
		files:   map[string]string{"kyc-link-key-file": "payout-kyc-site"},
		secrets: []string{"payout-kyc-site", "payout-kyc-vendor"},
	},
}

// TestSiteComponents renders config/default with config/dashboard, config/kycsite and both, as
// docs/operations/dashboard.md and docs/kyc-site.md say: the facade gets each one's flags (every
// one a flag of payoutd, every $(VAR) set), the files they name are mounted read-only from the
// Secret, the site's port is served by a Service of its own; the controllers and the sweeper are
// exactly as without the components, and no pod but the facade reads their Secrets.
func TestSiteComponents(t *testing.T) {
	_, base := rendered(t)
	known := payoutdFlags(t)
	deployDoc, err := os.ReadFile(filepath.Join(root, "docs", "operations", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, enabled := range [][]siteComponent{siteComponents[:1], siteComponents[1:], siteComponents} {
		var dirs []string
		for _, c := range enabled {
			dirs = append(dirs, c.dir)
		}
		t.Run(strings.Join(dirs, "+"), func(t *testing.T) {
			_, objs := renderWith(t, dirs...)
			facade := as[appsv1.Deployment](t, find(t, objs, "Deployment", "payout-facade"))
			container := facade.Spec.Template.Spec.Containers[0]
			args := map[string]string{}
			for _, a := range container.Args {
				name, value, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
				if !known[name] {
					t.Errorf("facade: %s is not a flag of payoutd", a)
				}
				args[name] = value
			}
			checkVariables(t, objs, facade)

			for _, c := range enabled {
				for _, f := range c.flags {
					if _, ok := args[f]; !ok {
						t.Errorf("%s: the facade is not given --%s", c.dir, f)
					}
				}
				for f, secret := range c.files {
					path, ok := args[f]
					if !ok {
						t.Errorf("%s: the facade is not given --%s", c.dir, f)
						continue
					}
					checkSecretFile(t, facade, "--"+f, path, secret)
				}
				doc, err := os.ReadFile(filepath.Join(root, c.doc))
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(doc), "config/"+c.dir) {
					t.Errorf("%s does not say how to enable config/%s", c.doc, c.dir)
				}
				for _, s := range c.secrets {
					if !slices.Contains(secretsOf(facade), s) {
						t.Errorf("%s: the facade does not read Secret %s", c.dir, s)
					}
					if !strings.Contains(string(deployDoc), "`"+s+"`") {
						t.Errorf("docs/operations/deploy.md does not document Secret %s", s)
					}
				}
			}

			for _, name := range []string{"payout-controller", "payout-sweeper"} {
				was, is := find(t, base, "Deployment", name), find(t, objs, "Deployment", name)
				if !reflect.DeepEqual(was.Object, is.Object) {
					t.Errorf("%s differs from config/default's: the components are the facade's alone", name)
				}
				d := as[appsv1.Deployment](t, is)
				for _, c := range siteComponents {
					for _, s := range c.secrets {
						if slices.Contains(secretsOf(d), s) {
							t.Errorf("%s reads Secret %s", name, s)
						}
					}
				}
			}
			for _, o := range objs {
				if o.GetKind() == "Secret" {
					t.Errorf("%s is part of the manifests: secrets are provided by the cluster's operators", key(o))
				}
			}

			site := slices.ContainsFunc(enabled, func(c siteComponent) bool { return c.dir == "kycsite" })
			if !site {
				return
			}
			_, port, err := net.SplitHostPort(args["kyc-site-bind-address"])
			if err != nil {
				t.Fatalf("--kyc-site-bind-address=%s: %v", args["kyc-site-bind-address"], err)
			}
			svc := as[corev1.Service](t, find(t, objs, "Service", "payout-kyc-site"))
			pods := labels.Set(facade.Spec.Template.Labels)
			if sel := labels.SelectorFromSet(svc.Spec.Selector); len(svc.Spec.Selector) == 0 || !sel.Matches(pods) {
				t.Errorf("the site's Service selects %v, the facade's pods are %v", svc.Spec.Selector, pods)
			}
			for _, name := range []string{"payout-controller", "payout-sweeper"} {
				d := as[appsv1.Deployment](t, find(t, objs, "Deployment", name))
				if labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)) {
					t.Errorf("the site's Service selects %s's pods", name)
				}
			}
			if len(svc.Spec.Ports) != 1 {
				t.Fatalf("the site's Service has ports %v", svc.Spec.Ports)
			}
			target := svc.Spec.Ports[0].TargetPort.StrVal
			var declared *corev1.ContainerPort
			for i, p := range container.Ports {
				if p.Name == target {
					declared = &container.Ports[i]
				}
			}
			if declared == nil || port != strconv.Itoa(int(declared.ContainerPort)) {
				t.Errorf("the site's Service targets port %q (%v) of the facade, which listens on %s", target, declared, args["kyc-site-bind-address"])
			}
		})
	}
}

// checkSecretFile checks that the file a flag names is a key of secret, mounted read-only for
// the owner and payoutd's group only (the pods' fsGroup) as the others are.
func checkSecretFile(t *testing.T, d *appsv1.Deployment, flag, path, secret string) {
	t.Helper()
	dir, file := filepath.Dir(path), filepath.Base(path)
	var mount *corev1.VolumeMount
	for i, m := range d.Spec.Template.Spec.Containers[0].VolumeMounts {
		if m.MountPath == dir {
			mount = &d.Spec.Template.Spec.Containers[0].VolumeMounts[i]
		}
	}
	if mount == nil {
		t.Errorf("%s: %s=%s, but nothing is mounted at %s", d.Name, flag, path, dir)
		return
	}
	if !mount.ReadOnly {
		t.Errorf("%s: %s is mounted writable", d.Name, dir)
	}
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Name != mount.Name {
			continue
		}
		if v.Secret == nil || v.Secret.SecretName != secret {
			t.Errorf("%s: %s is volume %s, not Secret %s", d.Name, dir, v.Name, secret)
			return
		}
		if m := v.Secret.DefaultMode; m == nil || *m != 0o440 {
			t.Errorf("%s: Secret %s's files have mode %s, want 0440", d.Name, secret, fileMode(m))
		}
		if v.Secret.Optional != nil && *v.Secret.Optional {
			t.Errorf("%s: Secret %s is optional, but payoutd does not start without %s", d.Name, secret, path)
		}
		if !slices.ContainsFunc(v.Secret.Items, func(k corev1.KeyToPath) bool { return k.Path == file && k.Mode == nil }) {
			t.Errorf("%s: Secret %s's volume has no file %s: %v", d.Name, secret, file, v.Secret.Items)
		}
		return
	}
	t.Errorf("%s: no volume %s", d.Name, mount.Name)
}

// checkVariables checks that each $(VAR) of d's arguments is set, from a ConfigMap of the
// rendering that has the key, or from a Secret.
func checkVariables(t *testing.T, objs []*unstructured.Unstructured, d *appsv1.Deployment) {
	t.Helper()
	ref := regexp.MustCompile(`\$\(([A-Z_]+)\)`)
	for _, c := range d.Spec.Template.Spec.Containers {
		env := map[string]corev1.EnvVar{}
		for _, e := range c.Env {
			env[e.Name] = e
		}
		for _, a := range c.Args {
			for _, m := range ref.FindAllStringSubmatch(a, -1) {
				e, ok := env[m[1]]
				switch {
				case !ok || e.ValueFrom == nil:
					t.Errorf("%s: %s uses $(%s), which is not set from a ConfigMap or Secret", d.Name, a, m[1])
				case e.ValueFrom.ConfigMapKeyRef != nil:
					cm := e.ValueFrom.ConfigMapKeyRef
					data, _, _ := unstructured.NestedStringMap(find(t, objs, "ConfigMap", cm.Name).Object, "data")
					if _, ok := data[cm.Key]; !ok {
						t.Errorf("%s: ConfigMap %s has no key %s", d.Name, cm.Name, cm.Key)
					}
				case e.ValueFrom.SecretKeyRef == nil:
					t.Errorf("%s: %s uses $(%s), which is neither a ConfigMap's nor a Secret's", d.Name, a, m[1])
				}
			}
		}
	}
}

func fileMode(m *int32) string {
	if m == nil {
		return "unset"
	}
	return fmt.Sprintf("%#o", *m)
}
