# Allocates heavily (dicts, lists, strings, sets, threads) and prints a deterministic digest, so
# that a run under LD_PRELOAD=liblethe-malloc.so can be compared byte for byte with a plain run.
import hashlib
import threading


def churn(seed, rounds):
    table = {}
    digest = hashlib.sha256()
    for i in range(rounds):
        key = "key-%d-%d" % (seed, i % 5000)
        value = [str(i * j) for j in range(i % 17)]
        table[key] = value
        if i % 3 == 0:
            table.pop("key-%d-%d" % (seed, (i * 7) % 5000), None)
        if i % 1000 == 0:
            blob = ("x" * (i % 300)).join(sorted(table)[:50])
            digest.update(blob.encode())
    words = {w for v in table.values() for w in v}
    digest.update(str(len(table)).encode())
    digest.update(str(len(words)).encode())
    return digest.hexdigest()


results = [None] * 4


def worker(index):
    results[index] = churn(index, 15000)


threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(churn(99, 30000))
for result in results:
    print(result)
big = [bytes(range(256)) * (1 + i % 64) for i in range(5000)]
print(sum(len(b) for b in big))
