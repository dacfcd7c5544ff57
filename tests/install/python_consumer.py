"""A Python host of the installed gpupool module, with c_consumer's command line.

    python3 python_consumer.py schedule SNAPSHOT [POLICY]
    python3 python_consumer.py validate SNAPSHOT
    python3 python_consumer.py explain SNAPSHOT JOB [POLICY]
    python3 python_consumer.py apply SNAPSHOT DECISIONS

run_consumer.cmake runs it with PYTHONPATH set to the installed module's directory and compares
its output with the `gpupool` command's. An invalid input prints the message of gpupool.Error on
stderr and exits 1, like the CLI.
"""
import sys

import gpupool


def read(path):
    # Bytes, not str: an invalid UTF-8 file must reach gpupool (which refuses it with the CLI's
    # message), not stop at Python's decoder. gpupool accepts both.
    with open(path, "rb") as f:
        return f.read()


def main(argv):
    command, args = argv[1], argv[2:]
    try:
        if command == "schedule" and len(args) in (1, 2):
            policy = read(args[1]) if len(args) == 2 else None
            out = gpupool.schedule(read(args[0]), policy)
        elif command == "validate" and len(args) == 1:
            out = gpupool.validate(read(args[0]))
        elif command == "explain" and len(args) in (2, 3):
            policy = read(args[2]) if len(args) == 3 else None
            out = gpupool.explain(read(args[0]), args[1], policy)
        elif command == "apply" and len(args) == 2:
            out = gpupool.apply(read(args[0]), read(args[1]))
        else:
            print("python_consumer: bad arguments", file=sys.stderr)
            return 2
    except gpupool.Error as error:
        print(error, file=sys.stderr)
        return 1
    sys.stdout.write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
