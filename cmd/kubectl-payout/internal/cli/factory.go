package cli

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stablepay/payout-operator/internal/scheme"
)

// requestTimeout bounds each API request, so an unreachable cluster fails a command instead of
// hanging it.
const requestTimeout = 30 * time.Second

// Factory gives commands their streams, clock and cluster client.
type Factory struct {
	IOStreams
	Clock clock.PassiveClock

	// Kubeconfig is the --kubeconfig flag; empty means the usual rules: $KUBECONFIG, then
	// ~/.kube/config, then the in-cluster configuration.
	Kubeconfig string

	client client.Client
}

// NewFactory is a factory on the given streams and the wall clock.
func NewFactory(streams IOStreams) *Factory {
	return &Factory{IOStreams: streams, Clock: clock.RealClock{}}
}

// AddFlags registers the connection flags.
func (f *Factory) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.Kubeconfig, "kubeconfig", "", "path to the kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
}

// Client connects to the cluster on first use. It reads from the API server directly, never
// from a cache: a command acts on the stored state. Its Forbidden errors are *ForbiddenError.
func (f *Factory) Client() (client.Client, error) {
	if f.client != nil {
		return f.client, nil
	}
	cfg, err := f.restConfig()
	if err != nil {
		return nil, err
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		return nil, fmt.Errorf("connecting to the cluster at %s: %w", cfg.Host, err)
	}
	// a refusal for lack of rights says who may not do what (ForbiddenError)
	f.client = forbiddenClient(c)
	return f.client, nil
}

func (f *Factory) restConfig() (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = f.Kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if clientcmd.IsEmptyConfig(err) {
		if env := os.Getenv(clientcmd.RecommendedConfigPathEnvVar); env != "" {
			return nil, fmt.Errorf("no cluster configured: KUBECONFIG=%s names no usable kubeconfig file", env)
		}
		return nil, fmt.Errorf("no cluster configured: set KUBECONFIG or pass --kubeconfig")
	}
	if err != nil {
		return nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	cfg.Timeout = requestTimeout
	cfg.UserAgent = "kubectl-payout"
	// API deprecation warnings go to stderr like kubectl's, not through controller-runtime's
	// logger, which a one-shot command never sets up.
	cfg.WarningHandler = rest.NewWarningWriter(f.ErrOut, rest.WarningWriterOptions{Deduplicate: true})
	return cfg, nil
}

// Scheme knows the built-in kinds (namespaces, events) and the service's kinds.
func Scheme() *runtime.Scheme { return scheme.New() }
