// ring.h — the circular doubly linked lists of the allocator: the page heap's free runs by length,
// parked runs, dirty LRU and chunks, the bins' non-full runs, the live thread caches. Intrusive,
// one head pointer, head->prev is the tail.
//
// Ring<Node, &Node::prev, &Node::next> works on any node type with two link members. Callers own
// the locking (all these lists live under an arena's lock).
#ifndef LETHE_ALLOC_RING_H_
#define LETHE_ALLOC_RING_H_

#include <cstdint>

namespace lethe::internal {

template <typename Node, Node* Node::*kPrev, Node* Node::*kNext>
struct Ring {
  // Puts `node` at the tail (just before the head).
  static void Append(Node*& head, Node* node) {
    if (head == nullptr) {
      node->*kPrev = node->*kNext = node;
      head = node;
      return;
    }
    LinkAfter(head->*kPrev, node);
  }
  // Appends `node`, then makes it the head if its address is below the head's: allocation from
  // the head then favours low addresses, and high memory drains (an O(1) approximation of
  // lowest-address-first).
  static void AppendLowFirst(Node*& head, Node* node) {
    Append(head, node);
    if (reinterpret_cast<uintptr_t>(node) < reinterpret_cast<uintptr_t>(head)) head = node;
  }
  // Puts `node` just after `after` (nullptr: at the head).
  static void InsertAfter(Node*& head, Node* after, Node* node) {
    if (after == nullptr) {
      Append(head, node);
      head = node;
      return;
    }
    LinkAfter(after, node);
  }
  // The last node (nullptr when empty).
  static Node* Tail(Node* head) { return head == nullptr ? nullptr : head->*kPrev; }
  // Calls f(node) for every node from the head on; f may unlink the node it is given.
  template <typename F>
  static void ForEach(Node* head, F f) {
    if (head == nullptr) return;
    Node* node = head;
    Node* last = head->*kPrev;
    while (true) {
      Node* next = node->*kNext;
      bool at_last = node == last;
      f(node);
      if (at_last) return;
      node = next;
    }
  }
  // The first of at most `limit` nodes from the head on for which pred(node) holds, or nullptr.
  template <typename Pred>
  static Node* FindFirst(Node* head, uint32_t limit, Pred pred) {
    Node* node = head;
    for (uint32_t seen = 0; node != nullptr && seen < limit; ++seen) {
      if (pred(node)) return node;
      node = node->*kNext;
      if (node == head) return nullptr;
    }
    return nullptr;
  }
  // Links `node` between `after` and its successor (the ring is not empty).
  static void LinkAfter(Node* after, Node* node) {
    Node* next = after->*kNext;
    node->*kPrev = after;
    node->*kNext = next;
    next->*kPrev = node;
    after->*kNext = node;
  }
  // Takes `node` out; true when the list became empty.
  static bool Unlink(Node*& head, Node* node) {
    if (node->*kNext == node) {
      head = nullptr;
      return true;
    }
    (node->*kPrev)->*kNext = node->*kNext;
    (node->*kNext)->*kPrev = node->*kPrev;
    if (head == node) head = node->*kNext;
    return false;
  }
};

}  // namespace lethe::internal

#endif  // LETHE_ALLOC_RING_H_
