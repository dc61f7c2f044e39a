// JSON text of zarr.json: nesting limit, error wording, and a DOM builder
// that turns long rectilinear edge lists straight into runs.
#include "metadata/json_text.hpp"

#include "zarr3/limits.hpp"

#include <array>

namespace zarr3::detail {
namespace {

using nlohmann::json;

constexpr size_t kMaxJsonDepth = 512;

// Names the byte where nesting passes kMaxJsonDepth (run once the parser has
// stopped there).
void check_depth(std::string_view text, const std::string& where) {
    size_t depth = 0;
    bool in_string = false, escaped = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > kMaxJsonDepth)
                throw FormatError(where + ": invalid JSON at byte " + std::to_string(i) +
                                  ": nesting deeper than " + std::to_string(kMaxJsonDepth) +
                                  " levels");
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
}

// nlohmann's DOM builder with a nesting limit (parsing stops past
// kMaxJsonDepth), a node budget (parsing stops before the value past
// max_json_nodes() enters the DOM) and, given EdgeLists, the edge lists of
// {"chunk_grid": {"configuration": {"chunk_shapes": [<list>, ...]}}} kept
// out of the DOM while they hold only positive bare integers.
class Dom : public nlohmann::detail::json_sax_dom_parser<json> {
    using Base = nlohmann::detail::json_sax_dom_parser<json>;
    static constexpr size_t kShapesDepth = 4; // the chunk_shapes list
    static constexpr size_t kListDepth = 5;   // one axis' list

  public:
    Dom(json& root, EdgeLists* edges)
        : Base(root, true), edges_(edges), budget_(max_json_nodes()) {}

    bool over_budget() const { return over_budget_; }
    uint64_t budget() const { return budget_; }

    bool null() { return scalar() && Base::null(); }
    bool boolean(bool v) { return scalar() && Base::boolean(v); }
    bool number_integer(json::number_integer_t v) { return scalar() && Base::number_integer(v); }
    bool number_unsigned(json::number_unsigned_t v) {
        if (collecting_ && v > 0) {
            const size_t runs = axis_.runs().size();
            if (try_append(v)) return axis_.runs().size() == runs || count();
        }
        return scalar() && Base::number_unsigned(v);
    }
    bool number_float(json::number_float_t v, const json::string_t& s) {
        return scalar() && Base::number_float(v, s);
    }
    bool string(json::string_t& v) { return scalar() && Base::string(v); }
    bool binary(json::binary_t& v) { return scalar() && Base::binary(v); }
    bool key(json::string_t& k) {
        static const std::array<const char*, kShapesDepth> path = {"", "chunk_grid",
                                                                   "configuration", "chunk_shapes"};
        if (depth_ >= 1 && depth_ < kShapesDepth) key_ok_[depth_] = k == path[depth_];
        return Base::key(k);
    }
    bool start_object(std::size_t n) { return open(false) && Base::start_object(n); }
    bool start_array(std::size_t n) {
        if (!open(true)) return false;
        return collecting_ || Base::start_array(n); // a collected list enters the DOM at its end
    }
    bool end_object() {
        close();
        return Base::end_object();
    }
    bool end_array() {
        if (collecting_) { // the list held only positive bare integers
            collecting_ = false;
            if (axis_.num_chunks() > 0) edges_->axes[index_] = std::move(axis_);
            axis_ = AxisPartition();
            close();
            return Base::start_array(0) && Base::end_array(); // left empty in the DOM
        }
        if (in_shapes_ && depth_ == kShapesDepth) in_shapes_ = false;
        close();
        return Base::end_array();
    }

  private:
    bool try_append(uint64_t edge) {
        try {
            axis_.append(edge, 1);
            return true;
        } catch (const Error&) {
            return false; // overflow: the DOM path reports it, naming the member
        }
    }
    // Something other than a positive bare integer in a collected list: the
    // list goes to the DOM after all, with the integers collected so far.
    void stop_collecting() {
        collecting_ = false;
        // Its runs were counted; its edges now enter the DOM one by one.
        uint64_t edges = 0; // at most the text's length
        for (const auto& r : axis_.runs())
            edges += r.count;
        nodes_ = nodes_ - axis_.runs().size() + edges;
        if (nodes_ > budget_) { // the caller's count() stops the parse
            axis_ = AxisPartition();
            return;
        }
        Base::start_array(static_cast<std::size_t>(-1));
        for (const auto& r : axis_.runs())
            for (uint64_t c = 0; c < r.count; ++c)
                Base::number_unsigned(r.edge);
        axis_ = AxisPartition();
    }
    // One more value for the DOM (or one more run of a collected edge list);
    // false stops the parse once the budget is spent.
    bool count() {
        if (++nodes_ <= budget_) return true;
        over_budget_ = true;
        return false;
    }
    bool scalar() {
        if (collecting_) stop_collecting();
        if (in_shapes_ && depth_ == kShapesDepth) ++index_;
        return count();
    }
    bool open(bool array) {
        if (collecting_) stop_collecting();
        if (!count()) return false;
        if (++depth_ > kMaxJsonDepth) return false;
        if (depth_ < kShapesDepth) is_object_[depth_] = !array;
        if (!edges_ || !array) return true;
        if (depth_ == kShapesDepth && is_object_[1] && is_object_[2] && is_object_[3] &&
            key_ok_[1] && key_ok_[2] && key_ok_[3]) {
            in_shapes_ = true; // a later duplicate replaces an earlier one, as in the DOM
            index_ = 0;
            edges_->axes.clear();
            edges_->seen = true;
        } else if (depth_ == kListDepth && in_shapes_) {
            collecting_ = true;
        }
        return true;
    }
    void close() {
        --depth_;
        if (in_shapes_ && depth_ == kShapesDepth) ++index_; // an entry of chunk_shapes ended
    }

    EdgeLists* edges_;
    uint64_t budget_;
    uint64_t nodes_ = 0;
    bool over_budget_ = false;
    size_t depth_ = 0;
    std::array<bool, kShapesDepth> is_object_{};
    std::array<bool, kShapesDepth> key_ok_{};
    bool in_shapes_ = false;  // inside the chunk_shapes list
    size_t index_ = 0;        // its current entry
    bool collecting_ = false; // inside entry index_, all positive bare integers so far
    AxisPartition axis_;
};

} // namespace

json parse_json(std::string_view text, const std::string& where, EdgeLists* edges) {
    if (text.size() > kMaxMetadataBytes)
        throw FormatError(where + ": metadata of " + std::to_string(text.size()) +
                          " bytes exceeds the limit of " + std::to_string(kMaxMetadataBytes));
    try {
        json j;
        Dom dom(j, edges);
        if (!json::sax_parse(text.begin(), text.end(), &dom)) {
            if (dom.over_budget())
                throw FormatError(where + ": JSON document of " + std::to_string(text.size()) +
                                  " bytes holds more than " + std::to_string(dom.budget()) +
                                  " values (objects, lists, scalars), the limit that bounds its "
                                  "memory (ZARR3_MAX_JSON_NODES); refused");
            check_depth(text, where); // stopped for nesting: throws, naming the byte
            throw FormatError(where + ": invalid JSON");
        }
        return j;
    } catch (const json::parse_error& e) {
        std::string msg = e.what();
        const auto p = msg.find("] ");
        if (msg.rfind("[json.exception", 0) == 0 && p != std::string::npos) msg = msg.substr(p + 2);
        throw FormatError(where + ": invalid JSON at byte " + std::to_string(e.byte) + ": " + msg);
    } catch (const json::exception& e) {
        throw FormatError(where + ": invalid JSON: " + e.what());
    }
}

} // namespace zarr3::detail
