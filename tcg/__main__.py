from tcg.cli import main

raise SystemExit(main())
