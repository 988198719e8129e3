from hanna_stats.cli import main

raise SystemExit(main())
