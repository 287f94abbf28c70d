"""One module per kube-scheduler plugin; `registry` maps kube names to constructors."""
