"""What writes runs: the runner and its sinks, sweep, ablation, rescore, revalidation, abstention."""
