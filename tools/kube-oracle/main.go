// Command kube-oracle links the real kube-scheduler (k8s.io/kubernetes v1.37.2) and answers
// questions about recorded cases: per-node Filter/Score verdicts and DefaultPreemption dry
// runs (score), and whole-scheduler runs over a fake API server (sequence).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
)

const usage = `kube-oracle: kube-scheduler v1.37.2 as an oracle

  kube-oracle score    [--config FILE] [--feature-gates K=bool,...] [--cases FILE.jsonl[.gz] | stdin]
  kube-oracle sequence [--config FILE] [--feature-gates K=bool,...] (--cases FILE |
                       --generate plain|deployment|one-per-node [--nodes N] [--pods N])
  kube-oracle plugins  [--config FILE] [--feature-gates K=bool,...]   (effective plugins per profile)

Exit codes: 0 ok, 1 internal error, 2 bad input (malformed case, unknown object kind, bad flags).
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// parseFeatureGates reads "Key=true,Other=false" into a map for SetFromMap.
func parseFeatureGates(s string) (map[string]bool, error) {
	m := map[string]bool{}
	if strings.TrimSpace(s) == "" {
		return m, nil
	}
	for _, kv := range strings.Split(s, ",") {
		kv = strings.TrimSpace(kv)
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("feature gate %q: want Key=true|false", kv)
		}
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("feature gate %q: %v", kv, err)
		}
		m[strings.TrimSpace(k)] = b
	}
	return m, nil
}

type commonFlags struct {
	config       string
	cases        string
	featureGates string
	verbosity    int
}

func (c *commonFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.config, "config", "", "KubeSchedulerConfiguration file (default: kube's default v1 profile)")
	fs.StringVar(&c.cases, "cases", "", "cases file, JSON lines, optionally gzipped (default: stdin)")
	fs.StringVar(&c.featureGates, "feature-gates", "", "Key=bool,... applied with DefaultMutableFeatureGate.SetFromMap")
	fs.IntVar(&c.verbosity, "v", 0, "klog verbosity (logs go to stderr)")
}

func (c *commonFlags) setup() error {
	fg, err := parseFeatureGates(c.featureGates)
	if err != nil {
		return err
	}
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(fg); err != nil {
		return fmt.Errorf("--feature-gates: %w", err)
	}
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	_ = klogFlags.Set("v", strconv.Itoa(c.verbosity))
	_ = klogFlags.Set("logtostderr", "true")
	return nil
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, usage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	switch args[0] {
	case "score":
		return runScore(args[1:], stdin, stdout, stderr)
	case "sequence":
		return runSequence(args[1:], stdin, stdout, stderr)
	case "plugins":
		return runPlugins(args[1:], stdout, stderr)
	default:
		fmt.Fprintf(stderr, "kube-oracle: unknown command %q\n%s", args[0], usage)
		return 2
	}
}

// parseAndLoad parses a command's flags, applies the common ones and loads the configuration:
// the configuration, or nil and the exit code (bad flags or configuration are bad input).
func parseAndLoad(fs *flag.FlagSet, cf *commonFlags, args []string, stderr io.Writer) (*config.KubeSchedulerConfiguration, int) {
	if err := fs.Parse(args); err != nil {
		return nil, 2
	}
	if err := cf.setup(); err != nil {
		fmt.Fprintf(stderr, "kube-oracle: %v\n", err)
		return nil, 2
	}
	cfg, err := loadConfig(cf.config)
	if err != nil {
		fmt.Fprintf(stderr, "kube-oracle: config: %v\n", err)
		return nil, 2
	}
	return cfg, 0
}

// caseSource opens --cases (standard input for "" or "-"): the reader, its name for errors and
// its closer, or a nil reader and the exit code.
func caseSource(path string, stdin io.Reader, stderr io.Writer) (io.Reader, string, func(), int) {
	if path == "" || path == "-" {
		rc, err := openCasesReader(stdin)
		if err != nil {
			return nil, "", nil, exitFor(stderr, err)
		}
		return rc, "<stdin>", func() {}, 0
	}
	rc, name, err := openCases(path)
	if err != nil {
		fmt.Fprintf(stderr, "kube-oracle: %v\n", err)
		return nil, "", nil, 2
	}
	return rc, name, func() { rc.Close() }, 0
}

// exitFor maps an error to the exit code: 2 for bad input, 1 otherwise.
func exitFor(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "kube-oracle: %v\n", err)
	var ie *InputError
	if errors.As(err, &ie) {
		return 2
	}
	return 1
}

func runScore(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("score", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cf commonFlags
	cf.register(fs)
	cfg, code := parseAndLoad(fs, &cf, args, stderr)
	if cfg == nil {
		return code
	}
	r, source, closeCases, code := caseSource(cf.cases, stdin, stderr)
	if r == nil {
		return code
	}
	defer closeCases()
	oracle := NewOracle(cfg)
	w := bufio.NewWriterSize(stdout, 1<<20)
	defer w.Flush()
	enc := json.NewEncoder(w)
	ctx := context.Background()
	err := forEachCase(r, source, true, func(c *Case) error {
		exp, err := oracle.Evaluate(ctx, c)
		if err != nil {
			var ie *InputError
			if errors.As(err, &ie) {
				return err
			}
			return &InputError{Source: source, Line: c.Line, ID: c.ID, Msg: err.Error()}
		}
		return enc.Encode(ScoreLine{ID: c.ID, Expected: exp})
	})
	if err != nil {
		w.Flush()
		return exitFor(stderr, err)
	}
	return 0
}

// runPlugins prints, per profile, the plugins kube's framework enables at each extension
// point (Framework.ListPlugins after defaulting and MultiPoint expansion), with weights.
func runPlugins(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("plugins", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cf commonFlags
	cf.register(fs)
	cfg, code := parseAndLoad(fs, &cf, args, stderr)
	if cfg == nil {
		return code
	}
	o := NewOracle(cfg)
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	for i := range cfg.Profiles {
		e, err := o.newEnv(context.Background(), &Case{}, &cfg.Profiles[i], nil)
		if err != nil {
			fmt.Fprintf(stderr, "kube-oracle: %v\n", err)
			return 1
		}
		out := map[string]any{"profile": cfg.Profiles[i].SchedulerName, "plugins": e.fw.ListPlugins()}
		e.close()
		if err := enc.Encode(out); err != nil {
			return 1
		}
	}
	return 0
}
