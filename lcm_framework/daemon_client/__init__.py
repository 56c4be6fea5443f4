"""How LCM's other processes reach the local daemon: its files (pid, token, log), starting and stopping it, and
calling it after it proved it holds the token (``handshake``). The hook, the CLI and ``lcm doctor`` import this;
the daemon itself (``lcm_framework.daemon``) imports only its files and handshake from here."""
