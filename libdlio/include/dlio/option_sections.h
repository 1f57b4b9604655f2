// The sections of options that implementations declare and parse themselves (the s3 storage's
// storage.storage_options.*, storage/s3/s3_keys.cc): one typed value per implementation, held
// by the config (StorageConfig::backends) and handed on whole to the options its factory gets
// (StorageOptions::backends), so neither the config, the runner nor dlio/storage.h names an
// implementation's fields. A value type: copies are deep.
#pragma once

#include <map>
#include <memory>
#include <typeindex>
#include <typeinfo>
#include <utility>

namespace dlio {

class OptionSections {
 public:
  OptionSections() = default;
  OptionSections(const OptionSections& other) {
    for (const auto& [type, section] : other.sections_) sections_.emplace(type, section->Clone());
  }
  OptionSections& operator=(const OptionSections& other) {
    OptionSections copy(other);
    sections_.swap(copy.sections_);
    return *this;
  }
  OptionSections(OptionSections&&) = default;
  OptionSections& operator=(OptionSections&&) = default;

  // The section of type T, made with T's defaults on first use.
  template <typename T>
  T& Get() {
    std::unique_ptr<Section>& slot = sections_[std::type_index(typeid(T))];
    if (!slot) slot = std::make_unique<Holder<T>>();
    return static_cast<Holder<T>&>(*slot).value;
  }

  // The section of type T, or null when it was never set.
  template <typename T>
  const T* Find() const {
    auto it = sections_.find(std::type_index(typeid(T)));
    if (it == sections_.end()) return nullptr;
    return &static_cast<const Holder<T>&>(*it->second).value;
  }

  // A copy of the section of type T, or T's defaults when it was never set.
  template <typename T>
  T Value() const {
    const T* found = Find<T>();
    if (found != nullptr) return *found;
    return T{};
  }

 private:
  struct Section {
    virtual ~Section() = default;
    virtual std::unique_ptr<Section> Clone() const = 0;
  };
  template <typename T>
  struct Holder final : Section {
    T value{};
    std::unique_ptr<Section> Clone() const override { return std::make_unique<Holder>(*this); }
  };
  std::map<std::type_index, std::unique_ptr<Section>> sections_;
};

}  // namespace dlio
